import { describe, expect, it } from "vitest";
import { peakOf, worstFirst } from "./series-order";

describe("the overview's small charts", () => {
  it("sort worst first: the highest UNKNOWN share, then volume, then name", () => {
    const tools = [
      { tool: "quiet", calls: 3, unknownShare: 0 },
      { tool: "busy-bad", calls: 90, unknownShare: 0.2 },
      { tool: "small-bad", calls: 5, unknownShare: 0.2 },
      { tool: "worst", calls: 2, unknownShare: 0.5 },
      { tool: "busy", calls: 400, unknownShare: 0 },
    ];
    expect(worstFirst(tools).map((t) => t.tool)).toEqual(["worst", "busy-bad", "small-bad", "busy", "quiet"]);
    expect(tools[0]!.tool).toBe("quiet"); // the input is left as it was
  });

  it("name the busiest slice (the first of equals), or none when no slice has calls", () => {
    const points = [
      { t: 10, calls: 1 },
      { t: 20, calls: 7 },
      { t: 30, calls: 7 },
      { t: 40, calls: 0 },
    ];
    expect(peakOf(points)).toEqual({ t: 20, calls: 7 });
    expect(peakOf([{ t: 1, calls: 0 }])).toBeNull();
  });
});
