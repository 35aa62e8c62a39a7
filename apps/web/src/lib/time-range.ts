/** The range picker's presets and their length, ms. */
export const RANGE_PRESETS = {
  "1h": 3_600_000,
  "6h": 6 * 3_600_000,
  "24h": 24 * 3_600_000,
  "7d": 7 * 24 * 3_600_000,
} as const;
/** One preset name. */
export type RangePreset = keyof typeof RANGE_PRESETS;
/** The preset used when the URL names none. */
export const DEFAULT_PRESET: RangePreset = "24h";

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

/**
 * Reads the range from the URL: `from`/`to` (epoch ms, from before to) win; else `range` (a preset);
 * else the default preset. Preset windows end at `nowEpochMs` (rounded up to the minute so a
 * refetch keeps the same query for a minute).
 */
export function parseTimeRange(params: { get(name: string): string | null }, nowEpochMs: number): TimeRange {
  const from = epochMs(params.get("from"));
  const to = epochMs(params.get("to"));
  if (from !== null && to !== null && from < to) return { fromEpochMs: from, toEpochMs: to, preset: null };
  const name = params.get("range");
  const preset = isPreset(name) ? name : DEFAULT_PRESET;
  const end = Math.ceil(nowEpochMs / 60_000) * 60_000;
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
