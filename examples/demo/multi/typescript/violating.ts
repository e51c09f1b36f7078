export function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(x, lo));
}
