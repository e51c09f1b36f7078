export function clamp(x: number, lo: number, hi: number): number {
  const m = x < hi ? x : hi;
  return m > lo ? m : lo;
}
