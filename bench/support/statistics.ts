/** Nearest-rank percentiles of a list of numbers (milliseconds, usually). */
export function percentiles(values: number[], points = [50, 90, 99]): Record<string, number> {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) =>
    sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] : NaN;
  const out: Record<string, number> = {};
  for (const p of points) out[`p${p}`] = Math.round(at(p));
  out.max = Math.round(sorted[sorted.length - 1] ?? NaN);
  return out;
}

/** Average rate between the first and last timestamp (ms, performance.now()), and the busiest 1-s window. */
export function rateOf(times: number[]) {
  if (times.length < 2) return { seconds: 0, average: 0, peak: times.length };
  const sorted = [...times].sort((a, b) => a - b);
  const seconds = (sorted[sorted.length - 1] - sorted[0]) / 1000;
  let peak = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i] - sorted[j] >= 1000) j++;
    peak = Math.max(peak, i - j + 1);
  }
  return { seconds: +seconds.toFixed(2), average: seconds > 0 ? Math.round(sorted.length / seconds) : 0, peak };
}
