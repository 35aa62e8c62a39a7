import { describe, expect, it } from "vitest";
import { COMMON_PARAMS, checkMaxWindow, checkParams, type ParamRule, withoutProblems } from "./url-params";

const RULES: Record<string, ParamRule> = { ...COMMON_PARAMS, status: { kind: "oneOf", values: ["open", "aborted"] } };

describe("checkParams (issue 14: bad URL parameters were silently ignored)", () => {
  it("names each parameter the page ignores and the rule it breaks; valid ones pass", () => {
    const problems = checkParams({ status: "bogus", from: "abc", range: "2w", tool: "refund", tenant: "acme" }, RULES);
    expect(problems).toEqual([
      { param: "status", value: "bogus", rule: "must be one of open, aborted" },
      { param: "from", value: "abc", rule: "must be a time in epoch milliseconds (digits only, e.g. 1764547200000)" },
      { param: "range", value: "2w", rule: "must be one of 15m, 1h, 6h, 24h, 7d" },
    ]);
  });

  it("range=custom (a filter form's 'From the link' choice, the window in from/to) is no problem", () => {
    expect(checkParams({ range: "custom", from: "1764547200000", to: "1764550800000" }, RULES)).toEqual([]);
    expect(checkParams({ range: "Custom" }, RULES)).toHaveLength(1);
  });

  it("a window that ends before it starts, an unknown parameter, a tool filter too long", () => {
    expect(checkParams({ from: "2000", to: "1000" }, RULES)).toEqual([
      { param: "to", value: "1000", rule: "must be after from" },
    ]);
    expect(checkParams({ stauts: "open" }, RULES)[0]).toMatchObject({
      param: "stauts",
      rule: expect.stringMatching(/^is not a parameter of this page \(it takes .*status/),
    });
    expect(checkParams({ tool: "x".repeat(201) }, RULES)[0]).toMatchObject({ rule: "must be at most 200 characters" });
    expect(checkParams({ status: "", from: "1764547200000", to: "1764550800000" }, RULES)).toEqual([]);
  });

  it("the rest of the parameters is kept for the page and its 'remove them' link", () => {
    const params = { status: "bogus", tool: "refund", tenant: "acme" };
    expect(withoutProblems(params, checkParams(params, RULES))).toEqual({ tool: "refund", tenant: "acme" });
  });
});

describe("checkMaxWindow (issue 14: runs.list with only a start blamed toEpochMs)", () => {
  const DAY = 86_400_000;
  const NOW = 100 * DAY;
  it("names `from` and the rule when the window would be wider than the list reads", () => {
    expect(checkMaxWindow({ from: "0" }, NOW, 31 * DAY)).toEqual({
      param: "from",
      value: "0",
      rule: "must be at most 31 days before to (default: now)",
    });
    expect(checkMaxWindow({ from: String(NOW - 40 * DAY), to: String(NOW) }, NOW, 31 * DAY)?.rule).toBe(
      "must be at most 31 days before to",
    );
  });
  it("a window within the limit, a preset, or no valid `from`: nothing to say", () => {
    expect(checkMaxWindow({ from: String(NOW - 30 * DAY) }, NOW, 31 * DAY)).toBeNull();
    expect(checkMaxWindow({ from: "0", range: "1h" }, NOW, 31 * DAY)).toBeNull();
    expect(checkMaxWindow({ from: "abc" }, NOW, 31 * DAY)).toBeNull();
  });
});
