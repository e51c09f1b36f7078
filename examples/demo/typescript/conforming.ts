export function level(points: number): number {
  const hundreds = Math.trunc(points / 100);
  return hundreds > 10 ? 10 : hundreds;
}
