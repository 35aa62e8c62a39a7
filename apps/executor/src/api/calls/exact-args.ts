/**
 * A tool call's argument that JSON parsing would not keep exactly (issue 21 §4): the body reader
 * hands it on as its exact text (request-body.ts). It is taken only by a field declared to take it
 * losslessly — one whose schema accepts that text as a string (`z.string()`, a decimal string, a big
 * integer parsed from a string) and refuses a non-string there — and refused otherwise, naming the
 * field, before anything is recorded or sent: `2512292042121000001` to a field typed `number` would
 * have been rounded to `2512292042121000000`, another order.
 */
import { type AnyTool, invalidArgs } from "@tristate/core";
import { AppError } from "../../app-error.ts";
import { type InexactNumber, inexactNumberRule } from "../../request-body.ts";

/** A value no lossless field takes: a field that accepts it is untyped, not declared to take a string. */
const NOT_A_STRING = Object.freeze({ "tristate:not-a-string": true });

type Path = readonly (string | number)[];

function related(a: Path, b: Path): boolean {
  if (a.length === 0 || b.length === 0) return false;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (String(a[i]) !== String(b[i])) return false;
  return true;
}

function withValueAt(args: unknown, path: Path, value: unknown): unknown {
  const copy = structuredClone(args) as Record<string | number, unknown>;
  let cur = copy;
  for (const name of path.slice(0, -1)) cur = cur[name] as Record<string | number, unknown>;
  cur[path[path.length - 1]!] = value;
  return copy;
}

/** Whether the tool's schema has an issue at (or around) `path` for `args`. */
function refusedAt(tool: AnyTool, args: unknown, path: Path): boolean {
  if (!tool.args) return false; // no schema: nothing is declared, so nothing is declared lossless
  const parsed = tool.args.safeParse(args);
  return !parsed.success && parsed.error.issues.some((issue) => related(issue.path as Path, path));
}

/**
 * Refuses the call when one of its inexact numbers lies in a field not declared to take it as a string.
 * @param numbers paths relative to `args`.
 * @throws AppError BAD_INPUT naming `args.<field>`, with the INVALID_ARGUMENTS envelope as detail.
 */
export function refuseInexactArgs(tool: AnyTool | undefined, args: unknown, numbers: readonly InexactNumber[]): void {
  if (!tool) return; // the executor answers UNKNOWN_TOOL
  for (const n of numbers) {
    const lossless = !refusedAt(tool, args, n.path) && refusedAt(tool, withValueAt(args, n.path, NOT_A_STRING), n.path);
    if (lossless) continue;
    const field = n.path.join(".");
    const rule = inexactNumberRule(n.text);
    throw new AppError("BAD_INPUT", `args.${field}: ${rule}`, {
      field: `args.${field}`,
      detail: invalidArgs(tool.name, { field, rule }),
    });
  }
}
