/**
 * Text the durable log can hold. PostgreSQL's `text` and `jsonb` refuse NUL (U+0000), and a lone
 * surrogate (an unpaired U+D800–U+DFFF, e.g. the JSON escape `"\ud800"`) is not Unicode: `jsonb`
 * refuses it and UTF-8 cannot encode it. Input with either is refused before anything is written.
 * One rule, used by the executor (call arguments, operator notes) and by the service's API (every
 * string of every procedure's input, property names included).
 */

/** The rule a string with NUL breaks, in words. */
export const NUL_RULE_TEXT = "must not contain NUL (U+0000)";
/** The rule a string with a lone surrogate breaks, in words. */
export const LONE_SURROGATE_RULE_TEXT = "must be well-formed Unicode (no lone surrogate: an unpaired \\uD800–\\uDFFF)";

/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The rule `text` breaks ({@link NUL_RULE_TEXT} or {@link LONE_SURROGATE_RULE_TEXT}), or null when it holds. */
export function textRuleBroken(text: string): string | null {
  if (text.includes("\u0000")) return NUL_RULE_TEXT;
  if (LONE_SURROGATE.test(text)) return LONE_SURROGATE_RULE_TEXT;
  return null;
}

/** Where a value breaks the text rule: the path of the string (or of the object whose property name breaks it). */
export interface BadText {
  /** Property names and array indexes from the value's root; empty for the root itself. */
  path: (string | number)[];
  /** The rule, e.g. `must not contain NUL (U+0000)` or `property names must not contain NUL (U+0000)`. */
  rule: string;
}

/** A value being walked, linked to its parent (the path is built only for a value at fault). */
interface Visit {
  value: unknown;
  parent: Visit | null;
  name: string | number;
}

function pathOf(visit: Visit): (string | number)[] {
  const path: (string | number)[] = [];
  for (let v: Visit | null = visit; v?.parent; v = v.parent) path.push(v.name);
  return path.reverse();
}

/**
 * The first string in `value` (walked deep, in document order, through arrays and objects; property
 * names included) that breaks the text rule, or null. Iterative and linear, so no nesting depth
 * overflows the stack or costs quadratic time.
 */
export function findBadText(value: unknown): BadText | null {
  const stack: Visit[] = [{ value, parent: null, name: "" }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const v = visit.value;
    if (typeof v === "string") {
      const rule = textRuleBroken(v);
      if (rule) return { path: pathOf(visit), rule };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], parent: visit, name: i });
    } else if (typeof v === "object" && v !== null) {
      const names = Object.keys(v);
      for (const name of names) {
        const rule = textRuleBroken(name);
        if (rule) return { path: pathOf(visit), rule: `property names ${rule}` };
      }
      for (let i = names.length - 1; i >= 0; i--) {
        const name = names[i]!;
        stack.push({ value: (v as Record<string, unknown>)[name], parent: visit, name });
      }
    }
  }
  return null;
}
