/** The range picker's presets and their length, ms. */
export const RANGE_PRESETS = {
  "15m": 15 * 60_000,
  "1h": 3_600_000,
  "6h": 6 * 3_600_000,
  "24h": 24 * 3_600_000,
  "7d": 7 * 24 * 3_600_000,
} as const;
/** One preset name. */
export type RangePreset = keyof typeof RANGE_PRESETS;
/** The preset used when the URL names none (and, on the overview, the data is older than it). */
export const DEFAULT_PRESET: RangePreset = "24h";

/** The presets the overview fits a young database into, smallest first (each at most {@link DEFAULT_PRESET}). */
const FIT_PRESETS: readonly RangePreset[] = ["15m", "1h", "6h", "24h"];

/**
 * The overview's default window for data that starts at `oldestEpochMs`: the smallest of 15 min, 1 h,
 * 6 h and 24 h that holds it (a young database opens on the last 15 minutes), else {@link DEFAULT_PRESET}.
 * No data at all (null): 15 min, where the first calls will show.
 */
export function fitPreset(oldestEpochMs: number | null, nowEpochMs: number): RangePreset {
  if (oldestEpochMs === null) return FIT_PRESETS[0]!;
  const end = presetEnd(nowEpochMs);
  return FIT_PRESETS.find((p) => end - RANGE_PRESETS[p] <= oldestEpochMs) ?? DEFAULT_PRESET;
}

/**
 * Sparkline slices per preset: readable, whole-minute slices, so the minute rollups serve them and
 * only the unsealed tail is read record by record (30-second slices would read the whole window
 * raw): 15 min → 1 min, 1 h → 2 min, 6 h → 15 min, 24 h → 1 h, 7 d → 6 h.
 */
const PRESET_BUCKETS: Record<RangePreset, number> = { "15m": 15, "1h": 30, "6h": 24, "24h": 24, "7d": 28 };
/** Slices of an absolute window (the API's default). */
const CUSTOM_BUCKETS = 20;

/** How many sparkline slices (`buckets` of `stats.overview`) the overview asks for over `range`. */
export function bucketsFor(range: TimeRange): number {
  return range.preset ? PRESET_BUCKETS[range.preset] : CUSTOM_BUCKETS;
}

/** Preset windows end here: `nowEpochMs` rounded up to the minute (a refetch keeps the same query for a minute). */
function presetEnd(nowEpochMs: number): number {
  return Math.ceil(nowEpochMs / 60_000) * 60_000;
}

/** A window `[fromEpochMs, toEpochMs)`, and the preset it came from (null: absolute). */
export interface TimeRange {
  fromEpochMs: number;
  toEpochMs: number;
  preset: RangePreset | null;
}

export function isPreset(value: string | null | undefined): value is RangePreset {
  return value != null && Object.hasOwn(RANGE_PRESETS, value);
}

function epochMs(value: string | null | undefined): number | null {
  if (!value || !/^\d{1,16}$/.test(value)) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : null;
}

/** True when the URL names the window itself (`range`, or a valid `from`/`to`): it wins over any default. */
export function urlNamesRange(params: { get(name: string): string | null }): boolean {
  const from = epochMs(params.get("from"));
  const to = epochMs(params.get("to"));
  return (from !== null && to !== null && from < to) || isPreset(params.get("range"));
}

/**
 * Reads the range from the URL: `from`/`to` (epoch ms, from before to) win; else `range` (a preset);
 * else `fallback` (the overview passes {@link fitPreset}'s choice), else the default preset. Preset
 * windows end at `nowEpochMs` (rounded up to the minute so a refetch keeps the same query for a minute).
 */
export function parseTimeRange(
  params: { get(name: string): string | null },
  nowEpochMs: number,
  fallback: RangePreset = DEFAULT_PRESET,
): TimeRange {
  const from = epochMs(params.get("from"));
  const to = epochMs(params.get("to"));
  if (from !== null && to !== null && from < to) return { fromEpochMs: from, toEpochMs: to, preset: null };
  const name = params.get("range");
  const preset = isPreset(name) ? name : fallback;
  const end = presetEnd(nowEpochMs);
  return { fromEpochMs: end - RANGE_PRESETS[preset], toEpochMs: end, preset };
}

/**
 * The window of a list page: `range` (a preset, ending at `nowEpochMs`), else `from`/`to` (epoch ms)
 * when valid, else none (all time). Unlike the overview, lists default to all time.
 */
export function parseListWindow(
  params: Record<string, string | undefined>,
  nowEpochMs: number,
): { fromEpochMs?: number; toEpochMs?: number } {
  if (isPreset(params.range)) return { fromEpochMs: nowEpochMs - RANGE_PRESETS[params.range], toEpochMs: nowEpochMs };
  const from = epochMs(params.from);
  const to = epochMs(params.to);
  if (from !== null && to !== null && from < to) return { fromEpochMs: from, toEpochMs: to };
  if (from !== null && to === null) return { fromEpochMs: from };
  return {};
}
