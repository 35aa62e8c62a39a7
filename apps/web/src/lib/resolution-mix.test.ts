import { describe, expect, it } from "vitest";
import { MIX_KEYS, mixSegments, mixSummary } from "./resolution-mix";

const window = { fromEpochMs: 1_000, toEpochMs: 2_000 };
const zero = Object.fromEntries(MIX_KEYS.map((k) => [k, 0])) as Record<(typeof MIX_KEYS)[number], number>;

describe("the overview's resolution mix", () => {
  it("has a segment, a colour and a column for every category, other included, in order", () => {
    const segments = mixSegments({ tool: "pay", unknownCount: 0, resolutions: zero }, window);
    expect(segments.map((s) => s.key)).toEqual([...MIX_KEYS]);
    expect(new Set(segments.map((s) => s.color)).size).toBe(MIX_KEYS.length);
    expect(segments.find((s) => s.key === "other")).toMatchObject({ href: null, color: "var(--seg-other)" });
    expect(segments.find((s) => s.key === "human_resent")?.href).toBe(
      "/intents?tool=pay&resolution=human_resent&from=1000&to=2000",
    );
    expect(segments.find((s) => s.key === "open")?.href).toBe("/intents?tool=pay&status=UNKNOWN&from=1000&to=2000");
  });

  it("never says 'no UNKNOWN' for a row with UNKNOWNs: one settled as 'other' is named", () => {
    // The row that read "16.7 % UNKNOWN" and "no UNKNOWN outcomes": its one UNKNOWN ended as `other`.
    const row = { tool: "pay", unknownCount: 1, resolutions: { ...zero, other: 1 } };
    const text = mixSummary(mixSegments(row, window), row.unknownCount);
    expect(text).toBe("1 UNKNOWN: other 1");
    expect(text).not.toMatch(/no UNKNOWN/);
  });

  it("names every category with a count, and a shortfall rather than hide it", () => {
    const row = {
      tool: "pay",
      unknownCount: 5,
      resolutions: { ...zero, found: 2, human_confirmed_no_effect: 1, open: 1 },
    };
    expect(mixSummary(mixSegments(row, window), row.unknownCount)).toBe(
      "5 UNKNOWN: found 2, person: did not happen 1, still open 1, not broken down 1",
    );
    expect(mixSummary(mixSegments({ ...row, unknownCount: 0, resolutions: zero }, window), 0)).toBe("no UNKNOWN");
  });
});
