import { describe, expect, it } from "vitest";
import { bucketsFor, fitPreset, parseTimeRange, RANGE_PRESETS, urlNamesRange } from "./time-range";

const MIN = 60_000;
const HOUR = 60 * MIN;
/** A whole minute, so preset windows end exactly here. */
const now = 29_000_000 * MIN;
const url = (q: string) => new URLSearchParams(q);

describe("the overview's default window fits the data (issue 22 §3)", () => {
  it("a young database opens on the last 15 minutes, and an empty one too", () => {
    expect(fitPreset(now - 30_000, now)).toBe("15m");
    expect(fitPreset(now - 15 * MIN, now)).toBe("15m");
    expect(fitPreset(null, now)).toBe("15m");
  });

  it("older data: the smallest of 1 h, 6 h and 24 h that holds the oldest record", () => {
    expect(fitPreset(now - 15 * MIN - 1, now)).toBe("1h");
    expect(fitPreset(now - HOUR, now)).toBe("1h");
    expect(fitPreset(now - 2 * HOUR, now)).toBe("6h");
    expect(fitPreset(now - 7 * HOUR, now)).toBe("24h");
    expect(fitPreset(now - 24 * HOUR, now)).toBe("24h");
  });

  it("data older than the default window: the default, 24 hours (never 7 days)", () => {
    expect(fitPreset(now - 30 * 24 * HOUR, now)).toBe("24h");
  });

  it("measures from the window's end (now rounded up to the minute)", () => {
    // 20 s into a minute, the window ends 40 s later: a record 14 min 30 s old is 15 min 10 s before the end.
    expect(fitPreset(now + 20_000 - (14 * MIN + 30_000), now + 20_000)).toBe("1h");
    expect(fitPreset(now + 20_000 - 14 * MIN, now + 20_000)).toBe("15m");
  });

  it("the fitted preset is the window when the URL names none", () => {
    expect(parseTimeRange(url(""), now, "15m")).toEqual({ fromEpochMs: now - 15 * MIN, toEpochMs: now, preset: "15m" });
    expect(parseTimeRange(url(""), now)).toEqual({ fromEpochMs: now - 24 * HOUR, toEpochMs: now, preset: "24h" });
  });

  it("an explicit range in the URL always wins", () => {
    expect(parseTimeRange(url("range=7d"), now, "15m").preset).toBe("7d");
    expect(parseTimeRange(url("from=100&to=200"), now, "15m")).toEqual({
      fromEpochMs: 100,
      toEpochMs: 200,
      preset: null,
    });
    expect(urlNamesRange(url("range=1h"))).toBe(true);
    expect(urlNamesRange(url("from=100&to=200"))).toBe(true);
    // Not a range: no default is overridden by these.
    expect(urlNamesRange(url(""))).toBe(false);
    expect(urlNamesRange(url("range=2h"))).toBe(false);
    expect(urlNamesRange(url("from=300&to=200"))).toBe(false);
    expect(urlNamesRange(url("tenant=acme&all=1"))).toBe(false);
  });
});

describe("sparkline slices", () => {
  it("are readable, whole-minute slices per preset (15 min → 1 min)", () => {
    const sliceMs = (preset: keyof typeof RANGE_PRESETS) =>
      RANGE_PRESETS[preset] / bucketsFor({ fromEpochMs: 0, toEpochMs: RANGE_PRESETS[preset], preset });
    expect(sliceMs("15m")).toBe(MIN);
    expect(sliceMs("1h")).toBe(2 * MIN);
    expect(sliceMs("6h")).toBe(15 * MIN);
    expect(sliceMs("24h")).toBe(HOUR);
    expect(sliceMs("7d")).toBe(6 * HOUR);
  });

  it("an absolute window keeps the API's 20 slices", () => {
    expect(bucketsFor({ fromEpochMs: 0, toEpochMs: 5 * HOUR, preset: null })).toBe(20);
  });
});
