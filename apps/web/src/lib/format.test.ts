import { describe, expect, it } from "vitest";
import { axisZoneLabel, displayZoneName, formatTime, fromDateTimeInput, toDateTimeInput } from "./format";

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
