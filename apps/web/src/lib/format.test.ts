import { describe, expect, it } from "vitest";
import {
  axisZoneLabel,
  displayZoneName,
  formatTime,
  fromDateTimeInput,
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
