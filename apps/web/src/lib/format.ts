/** A 0–1 share as a percentage with one decimal, e.g. `50.0%`; `–` for null. */
export function formatShare(share: number | null): string {
  return share === null ? "–" : `${(share * 100).toFixed(1)}%`;
}

/** A change of share in percentage points, signed, e.g. `+12.5 pp`; `–` for null. */
export function formatShareChange(change: number | null): string {
  if (change === null) return "–";
  const pp = change * 100;
  return `${pp > 0 ? "+" : pp < 0 ? "−" : "±"}${Math.abs(pp).toFixed(1)} pp`;
}

/** A duration in the largest fitting units, e.g. `850 ms`, `12.3 s`, `4m 05s`, `3h 02m`, `2d 4h`. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.floor(ms / 1000);
  const pad = (n: number) => String(n).padStart(2, "0");
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
}

/** The zone times are shown in: the browser's own, or UTC (the header's toggle). */
export type DisplayTimeZone = "local" | "UTC";

/**
 * The zone of every time on the page. UTC until the page has mounted in the browser: the server does
 * not know the browser's zone, so the server's HTML and the first render in the browser agree (UTC,
 * labelled), then `TimeZoneScope` sets the chosen zone and writes the page again — one zone per page.
 */
let displayTimeZone: DisplayTimeZone = "UTC";

/** Sets the zone every later {@link formatTime} uses (the header's UTC toggle). */
export function setDisplayTimeZone(zone: DisplayTimeZone): void {
  displayTimeZone = zone;
}

function zoneOption(zone: DisplayTimeZone = displayTimeZone): { timeZone?: string } {
  return zone === "UTC" ? { timeZone: "UTC" } : {};
}

/**
 * The name of a zone as the page states it: `UTC`, or the browser's zone with its offset now, e.g.
 * `Europe/Berlin (GMT+1)`. Without an argument, the zone shown now.
 */
export function displayZoneName(zone: DisplayTimeZone = displayTimeZone, nowEpochMs = Date.now()): string {
  if (zone === "UTC") return "UTC";
  const iana = Intl.DateTimeFormat().resolvedOptions().timeZone;
  // A browser in UTC names it the same way either way (no "UTC (GMT+0)" beside "UTC").
  if (isUtcZoneName(iana)) return "UTC";
  const offset =
    new Intl.DateTimeFormat("en-GB", { timeZoneName: "shortOffset" })
      .formatToParts(nowEpochMs)
      .find((p) => p.type === "timeZoneName")?.value ?? "";
  return offset && offset !== iana ? `${iana} (${offset})` : iana;
}

/** The label of a time axis: what the ticks are and in which zone, e.g. `Time (UTC)`. */
export function axisZoneLabel(zone: DisplayTimeZone = displayTimeZone): string {
  return `Time (${displayZoneName(zone)})`;
}

/**
 * An epoch-ms time as date and time with seconds and the time zone, in the shown zone (or `zone`),
 * e.g. `30 Nov 2026, 21:30:05 UTC`. Every time on a page goes through here, so each carries its zone.
 */
export function formatTime(epochMs: number | null, zone: DisplayTimeZone = displayTimeZone): string {
  if (epochMs === null) return "–";
  return new Date(epochMs).toLocaleString(undefined, {
    ...zoneOption(zone),
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    timeZoneName: "short",
  });
}

/** A JSON value, pretty-printed. */
export function formatJson(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? "null";
}

/**
 * `YYYY-MM-DDTHH:mm` of an instant in `zone` (the page's), for a datetime-local input whose label
 * names that zone; empty for undefined.
 */
export function toDateTimeInput(epochMs: number | undefined, zone: DisplayTimeZone): string {
  if (epochMs === undefined) return "";
  const d = new Date(epochMs);
  const utc = zone === "UTC";
  const pad = (n: number) => String(n).padStart(2, "0");
  const [y, mo, da, h, mi] = utc
    ? [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes()]
    : [d.getFullYear(), d.getMonth() + 1, d.getDate(), d.getHours(), d.getMinutes()];
  return `${y}-${pad(mo)}-${pad(da)}T${pad(h)}:${pad(mi)}`;
}

/** The instant (epoch ms) a datetime-local input's value names in `zone`; NaN when empty or invalid. */
export function fromDateTimeInput(value: string, zone: DisplayTimeZone): number {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)) return Number.NaN;
  return new Date(zone === "UTC" ? `${value}Z` : value).getTime();
}

/**
 * Pretty JSON (`formatJson`) cut where a field named `…EpochMs` holds a number: the text between,
 * and each such number as `{ epochMs }`, for a view that shows it as a time with its zone (a raw
 * epoch number means nothing to a reader). Nested fields too; other numbers stay as they are.
 */
export function splitEpochFields(value: unknown): Array<string | { epochMs: number }> {
  const json = formatJson(value);
  const parts: Array<string | { epochMs: number }> = [];
  const pattern = /("[^"\\]*EpochMs": )(-?\d+)(?=,?\n|$|\s*[}\]])/g;
  let last = 0;
  for (const match of json.matchAll(pattern)) {
    // Past what a Date holds (±8.64e15 ms): kept as the number it is.
    if (Math.abs(Number(match[2])) > 8.64e15) continue;
    const at = (match.index ?? 0) + (match[1] ?? "").length;
    parts.push(json.slice(last, at));
    parts.push({ epochMs: Number(match[2]) });
    last = at + (match[2] ?? "").length;
  }
  parts.push(json.slice(last));
  return parts.filter((p) => p !== "");
}

/** "1 step", "2 steps": a count with its noun, never "step(s)". */
export function countOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}

/** Whether an IANA zone name is UTC itself (not a zone that is at +0 only part of the year, like London). */
export function isUtcZoneName(iana: string | undefined): boolean {
  return /^(Etc\/)?(UTC|UCT|GMT|GMT[+-]0|Universal|Zulu|Greenwich)$/i.test(iana ?? "");
}

/** Whether this browser's own zone is UTC (then there is no other zone to offer). */
export function browserZoneIsUtc(): boolean {
  return isUtcZoneName(Intl.DateTimeFormat().resolvedOptions().timeZone);
}

/** Hours between ticks of a time axis: the smallest of these giving at most `max` ticks. */
const TICK_HOURS = [1, 2, 3, 4, 6, 12, 24, 48, 72, 96, 168];

/**
 * Round ticks for a time axis from `fromMs` to `toMs` in `zone`: whole hours that are a multiple of
 * the step (1, 2, 3, 4, 6 or 12 h, so local midnight is always one of them), or midnights for long
 * windows, at most `max` of them.
 */
export function axisTicks(fromMs: number, toMs: number, zone: DisplayTimeZone = displayTimeZone, max = 6): number[] {
  if (!(toMs > fromMs)) return [fromMs];
  const utc = zone === "UTC";
  const hourOf = (d: Date) => (utc ? d.getUTCHours() : d.getHours());
  const d = new Date(fromMs);
  if (utc) d.setUTCMinutes(0, 0, 0);
  else d.setMinutes(0, 0, 0);
  const hours: number[] = [];
  for (let t = d.getTime(); t <= toMs && hours.length < 24 * 40; ) {
    if (t >= fromMs) hours.push(t);
    const next = new Date(t);
    if (utc) next.setUTCHours(next.getUTCHours() + 1);
    else next.setHours(next.getHours() + 1);
    t = next.getTime() > t ? next.getTime() : t + 3_600_000;
  }
  for (const step of TICK_HOURS) {
    const ticks =
      step < 24
        ? hours.filter((t) => hourOf(new Date(t)) % step === 0)
        : hours.filter((t) => hourOf(new Date(t)) === 0).filter((_, i) => i % (step / 24) === 0);
    if (ticks.length <= max && ticks.length > 0) return ticks;
  }
  return [fromMs, toMs];
}

/**
 * A round tick's label: `HH:mm`, or the date (`1 Dec`) at midnight in `zone` and on windows longer
 * than two days, so a 24 h window that spans two days says where the day changes.
 */
export function formatAxisTick(epochMs: number, spanMs: number, zone: DisplayTimeZone = displayTimeZone): string {
  const d = new Date(epochMs);
  const midnight =
    zone === "UTC" ? d.getUTCHours() === 0 && d.getUTCMinutes() === 0 : d.getHours() === 0 && d.getMinutes() === 0;
  const date = spanMs > 2 * 86_400_000 || midnight;
  return d.toLocaleString("en-GB", {
    ...(date ? { month: "short", day: "numeric" } : { hour: "2-digit", minute: "2-digit", hourCycle: "h23" }),
    ...zoneOption(zone),
  });
}
