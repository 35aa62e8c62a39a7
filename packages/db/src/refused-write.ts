/**
 * Which failures of a write PostgreSQL will never get past (issue 21 §3): the values themselves are
 * refused, so the same statement fails the same way however often it is repeated — SQLSTATE class 22
 * (data exception: `22P05` untranslatable character, `22021` a byte sequence the encoding refuses,
 * `22001` a string too long, …), class 54 (program limit exceeded: a `jsonb` value over its size
 * limits) and `23514` (a CHECK constraint). Source: PostgreSQL, Appendix A "Error Codes". A write
 * that fails so is turned into the core's `WriteRefusedError`, which sends the record to a person
 * instead of being retried forever; every other failure (transient.ts) keeps its meaning.
 */
import { WriteRefusedError } from "@tristate/core";
import { isTransientDatabaseError } from "./transient.ts";

/** The SQLSTATE of a refusal for good in `error`'s cause chain, or undefined. */
function refusedSqlState(error: unknown): { code: string; message: string } | undefined {
  const seen = new Set<unknown>();
  for (let link = error; link !== null && typeof link === "object" && !seen.has(link); ) {
    seen.add(link);
    const e = link as { code?: unknown; originalCode?: unknown; message?: unknown; cause?: unknown };
    const code = typeof e.originalCode === "string" ? e.originalCode : typeof e.code === "string" ? e.code : "";
    if (/^(22|54)[0-9A-Z]{3}$/.test(code) || code === "23514") {
      return { code, message: typeof e.message === "string" ? e.message : code };
    }
    link = e.cause;
  }
  return undefined;
}

/**
 * Runs a write; a failure PostgreSQL will never get past is rethrown as `WriteRefusedError` (with the
 * database's message and SQLSTATE), anything else as it was.
 * @throws WriteRefusedError, or the write's own error.
 */
export async function refusingForGood<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const refused = isTransientDatabaseError(error) ? undefined : refusedSqlState(error);
    if (!refused) throw error;
    throw new WriteRefusedError(refused.message, { code: refused.code, cause: error });
  }
}
