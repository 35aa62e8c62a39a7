/**
 * The URL parameters of the list pages, checked: a value a page cannot use (`?status=bogus`,
 * `?from=abc`) is ignored by the page, and said so, naming the parameter and the rule, instead of
 * silently showing something else. One rule per parameter kind, shared by every page.
 */
import { RANGE_PRESETS } from "./time-range";
import { TOOL_FILTER_MAX_LENGTH } from "./tool-filter";

/** A parameter the page ignores, and why. */
export interface ParamProblem {
  /** The parameter's name, e.g. `status`. */
  param: string;
  /** Its value as given. */
  value: string;
  /** The rule it breaks, as a sentence fragment, e.g. "must be one of open, completed". */
  rule: string;
}

/** What one parameter accepts. */
export type ParamRule =
  | { kind: "oneOf"; values: readonly string[] }
  | { kind: "epochMs" }
  | { kind: "preset" }
  | { kind: "text"; maxLength: number }
  | { kind: "any" };

/** Rules of the parameters every list page shares. */
export const COMMON_PARAMS = {
  tenant: { kind: "any" },
  cursor: { kind: "any" },
  range: { kind: "preset" },
  from: { kind: "epochMs" },
  to: { kind: "epochMs" },
  /** The tool filter: a substring of the tool name (what the executor accepts: 1–200 characters). */
  tool: { kind: "text", maxLength: TOOL_FILTER_MAX_LENGTH },
} as const satisfies Record<string, ParamRule>;

/** Largest epoch ms a JS Date holds. */
const MAX_EPOCH_MS = 8.64e15;

function ruleBroken(rule: ParamRule, value: string): string | null {
  switch (rule.kind) {
    case "oneOf":
      return rule.values.includes(value) ? null : `must be one of ${rule.values.join(", ")}`;
    case "epochMs":
      return /^\d{1,16}$/.test(value) && Number(value) <= MAX_EPOCH_MS
        ? null
        : "must be a time in epoch milliseconds (digits only, e.g. 1764547200000)";
    case "preset":
      // "custom": the filter form's "From the link" choice, the window being the URL's from/to.
      return Object.hasOwn(RANGE_PRESETS, value) || value === "custom"
        ? null
        : `must be one of ${Object.keys(RANGE_PRESETS).join(", ")}`;
    case "text":
      return value.trim().length > rule.maxLength ? `must be at most ${rule.maxLength} characters` : null;
    case "any":
      return null;
  }
}

/**
 * The page's parameters that it ignores: a value breaking its rule, a `to` not after `from`, a
 * parameter the page does not know (a typo such as `?stauts=`). Empty values count as absent.
 * @param rules - the page's parameters (with {@link COMMON_PARAMS} for the shared ones).
 */
export function checkParams(params: Record<string, string>, rules: Record<string, ParamRule>): ParamProblem[] {
  const problems: ParamProblem[] = [];
  for (const [param, value] of Object.entries(params)) {
    if (value === "") continue;
    const rule = rules[param];
    if (!rule) {
      problems.push({
        param,
        value,
        rule: `is not a parameter of this page (it takes ${Object.keys(rules).join(", ")})`,
      });
      continue;
    }
    const broken = ruleBroken(rule, value);
    if (broken) problems.push({ param, value, rule: broken });
  }
  const bad = new Set(problems.map((p) => p.param));
  if (params.from && params.to && !bad.has("from") && !bad.has("to") && Number(params.to) <= Number(params.from)) {
    problems.push({ param: "to", value: params.to, rule: "must be after from" });
  }
  return problems;
}

/** The parameters without those the page ignores (for a "clear" link that keeps the rest). */
export function withoutProblems(params: Record<string, string>, problems: ParamProblem[]): Record<string, string> {
  const bad = new Set(problems.map((p) => p.param));
  return Object.fromEntries(Object.entries(params).filter(([k]) => !bad.has(k)));
}

/**
 * A `from` (epoch ms) too far before `to` (default: now) for a list whose window is bounded (the runs
 * list reads at most 31 days): the problem to show, or null. Checked in the page, so the page names
 * the URL's own parameter rather than showing the API's error about `fromEpochMs`.
 */
export function checkMaxWindow(params: Record<string, string>, nowEpochMs: number, maxMs: number): ParamProblem | null {
  if (!params.from || !/^\d{1,16}$/.test(params.from) || params.range) return null;
  const to = params.to && /^\d{1,16}$/.test(params.to) ? Number(params.to) : nowEpochMs;
  if (to - Number(params.from) <= maxMs) return null;
  const days = Math.round(maxMs / 86_400_000);
  return {
    param: "from",
    value: params.from,
    rule: `must be at most ${days} days before ${params.to ? "to" : "to (default: now)"}`,
  };
}
