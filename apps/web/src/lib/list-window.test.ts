import { describe, expect, it } from "vitest";
import { parseListWindow } from "./time-range";

describe("a list page's time window (URL state)", () => {
  const now = 10_000_000;
  it("is all time by default", () => expect(parseListWindow({}, now)).toStrictEqual({}));
  it("takes a preset, ending now; the preset wins over from/to", () => {
    expect(parseListWindow({ range: "1h", from: "1", to: "2" }, now)).toStrictEqual({
      fromEpochMs: now - 3_600_000,
      toEpochMs: now,
    });
  });
  it("takes an absolute window, and ignores a reversed one", () => {
    expect(parseListWindow({ from: "100", to: "200" }, now)).toStrictEqual({ fromEpochMs: 100, toEpochMs: 200 });
    expect(parseListWindow({ from: "300", to: "200" }, now)).toStrictEqual({});
  });
});
