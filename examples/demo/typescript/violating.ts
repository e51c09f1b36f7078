export function level(points: number): number {
  return Math.min(Math.round(points / 100), 10);
}
