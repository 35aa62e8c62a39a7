import { brandError, errorKindOf } from "./brand.ts";

/**
 * Thrown by an `IntentStore`'s write when the store refuses the values for good: repeating the
 * same write can never succeed (PostgreSQL: a data exception or a program limit, SQLSTATE classes 22
 * and 54, a CHECK violation 23514), unlike a transient failure (a lost connection, a restart) that a
 * retry may get past. The executor then sends the record to a person with {@link reason} instead of
 * retrying forever (issue 21 §3).
 */
export class WriteRefusedError extends Error {
  override readonly name = "WriteRefusedError";
  /** The store's reason in words, e.g. `value too long for type character varying(10)`. */
  readonly reason: string;
  /** The store's code for it, e.g. the SQLSTATE `22021`; undefined when it has none. */
  readonly code: string | undefined;
  constructor(reason: string, options: { code?: string; cause?: unknown } = {}) {
    super(`the intent log refused the write for good: ${reason}${options.code ? ` (${options.code})` : ""}`, {
      cause: options.cause,
    });
    this.reason = reason;
    this.code = options.code;
    brandError(this, "write-refused");
  }
}

/** True when `e` is a {@link WriteRefusedError} (from any copy of this package). */
export const isWriteRefusedError = (e: unknown): e is WriteRefusedError => errorKindOf(e) === "write-refused";
