import { describe, expect, it } from "vitest";
import { eventFacts, formatClock, formatOffset, matchOwners, type TimelineEventIn, timelineLines } from "./timeline";

const T0 = 1_750_000_000_000;
let seq = 0;
const ev = (type: string, at: number, data: Record<string, unknown> = {}): TimelineEventIn => ({
  id: String(++seq),
  type,
  atEpochMs: T0 + at,
  data,
});

describe("timelineLines: offsets and durations (issue 22 §4, the timeline reads like Temporal's history)", () => {
  it("gives each event its offset from the previous one, none for the first", () => {
    const lines = timelineLines([ev("created", 0), ev("sent", 12), ev("outcome", 1_212)]);
    expect(lines.map((l) => l.offsetMs)).toEqual([null, 12, 1_200]);
  });

  it("takes a send's duration from the outcome's durationMs, else from the latest sent", () => {
    const measured = timelineLines([ev("sent", 0, { attempt: 1 }), ev("outcome", 900, { durationMs: 850 })]);
    expect(measured[1]?.duration).toEqual({ ms: 850, what: "sent → outcome" });
    const derived = timelineLines([ev("sent", 0, { attempt: 1 }), ev("sent", 500, { attempt: 2 }), ev("outcome", 800)]);
    expect(derived[2]?.duration).toEqual({ ms: 300, what: "sent → outcome" });
  });

  it("measures a late answer from the send of its own attempt", () => {
    const lines = timelineLines([
      ev("sent", 0, { attempt: 1 }),
      ev("outcome", 4_000, { outcome: "UNKNOWN", durationMs: 4_000 }),
      ev("sent", 10_000, { attempt: 2 }),
      ev("late_answer", 12_000, { attempt: 1, outcome: "SUCCEEDED" }),
    ]);
    expect(lines[3]?.duration).toEqual({ ms: 12_000, what: "sent → outcome" });
  });

  it("gives a probe a duration only when its event carries one, and nothing else a duration", () => {
    const lines = timelineLines([
      ev("created", 0),
      ev("probe", 100, { probe: "key", answer: "absent" }),
      ev("probe", 300, { probe: "identity", answer: "found", durationMs: 42 }),
      ev("outcome", 400),
    ]);
    expect(lines.map((l) => l.duration)).toEqual([null, null, { ms: 42, what: "probe start → answer" }, null]);
  });
});

describe("formatOffset", () => {
  it.each([
    [12, "+12 ms"],
    [1_200, "+1.2 s"],
    [125_000, "+2m 05s"],
    [0, "+0 ms"],
    [-40, "−40 ms"],
  ])("%d ms → %s", (ms, text) => {
    expect(formatOffset(ms)).toBe(text);
  });
});

describe("formatClock, matchOwners, eventFacts", () => {
  it("shows the time of day to the millisecond", () => {
    expect(formatClock(Date.UTC(2026, 0, 2, 14, 3, 7, 125), "UTC")).toBe("14:03:07.125");
  });
  it("reads an identity match's owners, skipping malformed ones", () => {
    const owner = { key: "a".repeat(32), runId: "r-1", stepId: "s1" };
    expect(matchOwners({ owners: [owner, { key: 1 }, null] })).toEqual([owner]);
    expect(matchOwners({ why: "text only" })).toEqual([]);
  });
  it("puts an event's main facts on its line", () => {
    expect(eventFacts("conflict", { refusedKey: "ab12" })).toBe(
      "same run and step, other arguments: refused · refused key ab12",
    );
    expect(eventFacts("outcome", { outcome: "UNKNOWN", code: "READ_TIMEOUT", durationMs: 5 })).toBe(
      "UNKNOWN · READ_TIMEOUT",
    );
    expect(eventFacts("probe", { probe: "key", round: 1, answer: "absent" })).toBe("key probe · absent");
    expect(eventFacts("sent", { attempt: 2, timeoutMs: 8000 })).toBe("attempt 2");
  });
});
