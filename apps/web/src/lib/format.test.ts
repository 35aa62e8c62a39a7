import { describe, expect, it } from "vitest";
import {
  axisTicks,
  axisZoneLabel,
  displayZoneName,
  formatAxisTick,
  formatTime,
  fromDateTimeInput,
  isUtcZoneName,
  splitEpochFields,
  toDateTimeInput,
} from "./format";

const AT = Date.UTC(2026, 10, 30, 21, 30, 5);

describe("times carry their zone (issue 14: zones mixed on one page)", () => {
  it("every formatted time names its zone; the axis label names the zone", () => {
    expect(formatTime(AT, "UTC")).toMatch(/(21:30:05|09:30:05\sPM).*UTC$/);
    expect(formatTime(AT, "local")).toMatch(/\d{2}:\d{2}:\d{2}\s.*\S$/);
    expect(displayZoneName("UTC")).toBe("UTC");
    expect(displayZoneName("local")).toContain(Intl.DateTimeFormat().resolvedOptions().timeZone);
    expect(axisZoneLabel("UTC")).toBe("Time (UTC)");
  });

  it("before the page has mounted, times are in UTC (the server cannot know the browser's zone)", () => {
    expect(formatTime(AT)).toBe(formatTime(AT, "UTC"));
  });

  it("a datetime-local input is read and written in the page's zone", () => {
    expect(toDateTimeInput(AT, "UTC")).toBe("2026-11-30T21:30");
    expect(fromDateTimeInput("2026-11-30T21:30", "UTC")).toBe(Date.UTC(2026, 10, 30, 21, 30));
    const local = toDateTimeInput(AT, "local");
    expect(fromDateTimeInput(local, "local")).toBe(AT - 5_000);
    expect(fromDateTimeInput("", "UTC")).toBeNaN();
    expect(toDateTimeInput(undefined, "UTC")).toBe("");
  });
});

describe("splitEpochFields (review: raw epoch numbers in the timeline's event data)", () => {
  it("cuts out the numbers of fields ending in EpochMs, nested ones too, and keeps the rest as text", () => {
    const parts = splitEpochFields({ deadlineEpochMs: 1796097463909, attempt: 2, inner: { atEpochMs: 5 }, n: 7 });
    expect(parts.filter((p) => typeof p !== "string")).toEqual([{ epochMs: 1796097463909 }, { epochMs: 5 }]);
    const text = parts.map((p) => (typeof p === "string" ? p : `<${p.epochMs}>`)).join("");
    expect(text).toBe(
      '{\n  "deadlineEpochMs": <1796097463909>,\n  "attempt": 2,\n  "inner": {\n    "atEpochMs": <5>\n  },\n  "n": 7\n}',
    );
  });
  it("leaves strings, other numbers and non-numeric EpochMs fields alone", () => {
    expect(splitEpochFields({ note: "xEpochMs: 5", sizeMs: 12, fooEpochMs: null })).toEqual([
      '{\n  "note": "xEpochMs: 5",\n  "sizeMs": 12,\n  "fooEpochMs": null\n}',
    ]);
    expect(splitEpochFields({ farEpochMs: 9e15 })).toEqual(['{\n  "farEpochMs": 9000000000000000\n}']);
  });
});

describe("isUtcZoneName (review: a UTC browser was offered 'Show times in UTC')", () => {
  it("knows UTC's names, not zones that are at +0 only part of the year", () => {
    for (const z of ["UTC", "Etc/UTC", "Etc/GMT", "GMT", "Etc/Universal", "Etc/GMT+0"])
      expect(isUtcZoneName(z)).toBe(true);
    for (const z of ["Europe/London", "Africa/Abidjan", "America/New_York", undefined])
      expect(isUtcZoneName(z)).toBe(false);
  });
});

describe("axis ticks (review: '05:00, 11:56, 18:53, 03:48' without dates on a 24 h window)", () => {
  const H = 3_600_000;
  it("are round hours, and the date where a 24 h window crosses midnight", () => {
    const from = Date.UTC(2026, 10, 30, 4, 12);
    const ticks = axisTicks(from, from + 24 * H, "UTC");
    expect(ticks.length).toBeGreaterThan(2);
    expect(ticks.length).toBeLessThanOrEqual(6);
    for (const t of ticks) expect(t % (4 * H)).toBe(0);
    const labels = ticks.map((t) => formatAxisTick(t, 24 * H, "UTC"));
    expect(labels).toEqual(["08:00", "12:00", "16:00", "20:00", "1 Dec", "04:00"]);
  });
  it("short windows get hourly ticks, long ones midnights", () => {
    const from = Date.UTC(2026, 10, 30, 10, 30);
    expect(axisTicks(from, from + 3 * H, "UTC").map((t) => formatAxisTick(t, 3 * H, "UTC"))).toEqual([
      "11:00",
      "12:00",
      "13:00",
    ]);
    const week = axisTicks(from, from + 7 * 24 * H, "UTC");
    for (const t of week) expect(t % (24 * H)).toBe(0);
    expect(week.length).toBeLessThanOrEqual(6);
  });
});
