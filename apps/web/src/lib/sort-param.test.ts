import { describe, expect, it } from "vitest";
import { parseSortParam, sortParamOf, withSortParam } from "./sort-param";

describe("the overview's sort in the URL (review: the sort was lost on reload and in links)", () => {
  const columns = ["tool", "calls", "unknownShare"];
  it("reads ?sort=column and ?sort=-column, drops unknown columns", () => {
    expect(parseSortParam("calls", columns)).toEqual([{ id: "calls", desc: false }]);
    expect(parseSortParam("-unknownShare", columns)).toEqual([{ id: "unknownShare", desc: true }]);
    expect(parseSortParam("nope", columns)).toEqual([]);
    expect(parseSortParam(undefined, columns)).toEqual([]);
  });
  it("writes it back, keeping the other parameters", () => {
    expect(sortParamOf([{ id: "calls", desc: true }])).toBe("-calls");
    expect(sortParamOf([])).toBeUndefined();
    expect(withSortParam({ range: "24h", sort: "tool" }, [{ id: "calls", desc: false }])).toBe("range=24h&sort=calls");
    expect(withSortParam({ range: "24h", sort: "tool" }, [])).toBe("range=24h");
  });
});
