/** The value below which `q` (0..1) of the sorted `values` fall (nearest rank). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

/** Median and spread (max - min, as a fraction of the median) of repeated measurements. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  /** (max - min) / median: 0.05 means the rounds lay within 5 % of the median. */
  spread: number;
}

/** Summarises repeated measurements of one quantity. */
export function summarize(values: readonly number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  const median = quantile(sorted, 0.5);
  const min = sorted[0] ?? Number.NaN;
  const max = sorted.at(-1) ?? Number.NaN;
  return { median, min, max, spread: (max - min) / median };
}
