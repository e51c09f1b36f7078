export function level(points: number): number {
  return Math.min(Math.floor(points / 100), 10);
}
