/**
 * Time buckets and latency histograms of the per-tool rollups (`intent_rollups`). Pure functions,
 * shared by the refresh that writes the rollups and the overview that reads them.
 */

/**
 * Rollup levels, bucket widths in ms, finest first: 1 min, 10 min, 1 h, 6 h, 1 day (UTC, epoch-aligned).
 * Any range splits into at most 2 × (9 + 5 + 5 + 3) buckets plus whole days.
 */
export const ROLLUP_LEVELS_MS = [60_000, 600_000, 3_600_000, 21_600_000, 86_400_000] as const;

/** The finest level, ms: the dirty queue and the raw edges work in minutes. */
export const MINUTE_MS = ROLLUP_LEVELS_MS[0];

/**
 * Records created within this many ms before the last refresh's snapshot are read raw by the overview
 * (the refresh covers them, but a write that straddled the refresh may be missing from its rollup).
 * Twice the dirty trigger's 10 s: exact for write transactions shorter than 10 s. The raw tail (the
 * records after the horizon) is what every overview pays for, so it is kept short.
 */
export const SEAL_MARGIN_MS = 20_000;

/** Histogram resolution: buckets per doubling. Bucket k holds durations in [2^(k/8), 2^((k+1)/8)) ms. */
export const HIST_STEPS_PER_DOUBLING = 8;

/**
 * Worst relative error of a percentile read from the histogram against the nearest-rank percentile of
 * the samples: the bucket's geometric middle is within 2^(1/16) − 1 ≈ 4.4 % of any value in it.
 */
export const HIST_RELATIVE_ERROR = 2 ** (1 / (2 * HIST_STEPS_PER_DOUBLING)) - 1;

/**
 * SQL (float8) of the histogram bucket of a duration in ms (`d`); durations under 1 µs count as 1 µs.
 * Must agree with {@link histBucketOf}.
 */
export function histBucketSql(d: string): string {
  return `floor(${HIST_STEPS_PER_DOUBLING} * ln(greatest(${d}, 0.001)) / ln(2))::int`;
}

/** The histogram bucket of a duration in ms (as {@link histBucketSql}). */
export function histBucketOf(durationMs: number): number {
  return Math.floor((HIST_STEPS_PER_DOUBLING * Math.log(Math.max(durationMs, 0.001))) / Math.LN2);
}

/** The value reported for bucket k, ms: its geometric middle. */
export function histBucketValue(k: number): number {
  return 2 ** ((k + 0.5) / HIST_STEPS_PER_DOUBLING);
}

/** A latency histogram: bucket → count. */
export type LatencyHistogram = Map<number, number>;

/** Adds `count` × `other` (count may be −1 to take a histogram out) into `into`. */
export function addHistogram(into: LatencyHistogram, other: Record<string, number> | LatencyHistogram, sign = 1): void {
  const entries =
    other instanceof Map ? other.entries() : Object.entries(other).map(([k, n]) => [Number(k), n] as const);
  for (const [k, n] of entries) {
    const next = (into.get(k) ?? 0) + sign * n;
    if (next === 0) into.delete(k);
    else into.set(k, next);
  }
}

/**
 * Nearest-rank percentile `q` (0–1) of a histogram, as its bucket's middle (ms); null when empty.
 * Within {@link HIST_RELATIVE_ERROR} of the nearest-rank percentile of the samples themselves.
 */
export function histogramPercentile(hist: LatencyHistogram, q: number): number | null {
  let total = 0;
  for (const n of hist.values()) total += n;
  if (total <= 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const k of [...hist.keys()].sort((a, b) => a - b)) {
    seen += hist.get(k)!;
    if (seen >= rank) return histBucketValue(k);
  }
  return null;
}

/** A piece of a time range: rows of rollup level `levelMs` with bucket_start in [fromMs, toMs), or raw rows (`levelMs` 0). */
export interface Segment {
  levelMs: number;
  /** Epoch ms (inclusive). */
  fromMs: number;
  /** Epoch ms (exclusive). */
  toMs: number;
}

const floorTo = (t: number, step: number) => Math.floor(t / step) * step;
const ceilTo = (t: number, step: number) => Math.ceil(t / step) * step;

/**
 * Splits [fromMs, toMs) into raw edges (shorter than a minute) and whole rollup buckets, largest level
 * that fits first, adjacent buckets of one level merged. Every instant of the range is in exactly one
 * segment.
 */
export function decompose(fromMs: number, toMs: number): Segment[] {
  if (toMs <= fromMs) return [];
  const lo = ceilTo(fromMs, MINUTE_MS);
  const hi = floorTo(toMs, MINUTE_MS);
  if (lo >= hi) return [{ levelMs: 0, fromMs, toMs }];
  const out: Segment[] = [];
  const push = (levelMs: number, a: number, b: number) => {
    const last = out.at(-1);
    if (last && last.levelMs === levelMs && last.toMs === a) last.toMs = b;
    else out.push({ levelMs, fromMs: a, toMs: b });
  };
  if (fromMs < lo) push(0, fromMs, lo);
  let t = lo;
  while (t < hi) {
    let level: number = MINUTE_MS;
    for (const l of ROLLUP_LEVELS_MS) if (t % l === 0 && t + l <= hi) level = l;
    push(level, t, t + level);
    t += level;
  }
  if (hi < toMs) push(0, hi, toMs);
  return out;
}
