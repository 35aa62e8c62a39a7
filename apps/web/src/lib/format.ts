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

let displayTimeZone: DisplayTimeZone = "local";

/** Sets the zone every later {@link formatTime} uses (the header's UTC toggle). */
export function setDisplayTimeZone(zone: DisplayTimeZone): void {
  displayTimeZone = zone;
}

/** The zone times are shown in now. */
export function getDisplayTimeZone(): DisplayTimeZone {
  return displayTimeZone;
}

function zoneOption(): { timeZone?: string } {
  return displayTimeZone === "UTC" ? { timeZone: "UTC" } : {};
}

/** A chart axis label: `HH:mm`, or the month and day for windows longer than two days (shown zone). */
export function formatAxisTime(epochMs: number, spanMs: number): string {
  const long = spanMs > 2 * 86_400_000;
  return new Date(epochMs).toLocaleString(undefined, {
    ...(long ? { month: "short", day: "numeric" } : { hour: "2-digit", minute: "2-digit", hourCycle: "h23" }),
    ...zoneOption(),
  });
}

/** An epoch-ms time as date and time with seconds and the time zone, e.g. `30 Nov 2026, 21:30:05 UTC`. */
export function formatTime(epochMs: number | null): string {
  if (epochMs === null) return "–";
  return new Date(epochMs).toLocaleString(undefined, {
    ...zoneOption(),
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

/** `YYYY-MM-DDTHH:mm` local time for a datetime-local input, or empty. */
export function toDateTimeLocalOrEmpty(epochMs: number | undefined): string {
  if (epochMs === undefined) return "";
  const d = new Date(epochMs);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
