/**
 * Error brands: a kind registered under `Symbol.for`, so a guard (`isNotSentError`, …) recognises an
 * error thrown by another copy of this package, where `instanceof` would not (two versions of
 * `@tristate/core` in one process, a catalog module bundling its own copy).
 */

/** The symbol every Tristate error's kind is stored under (shared by every copy of every package). */
const ERROR_BRAND = Symbol.for("tristate.error.kind");

/** Marks `error` as being of `kind` (a non-enumerable property: not in JSON, not in logs' fields). */
export function brandError(error: Error, kind: string): void {
  Object.defineProperty(error, ERROR_BRAND, { value: kind, enumerable: false });
}

/** The brand's kind of `value`, or undefined for anything not branded. */
export function errorKindOf(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const kind = (value as { [ERROR_BRAND]?: unknown })[ERROR_BRAND];
  return typeof kind === "string" ? kind : undefined;
}
