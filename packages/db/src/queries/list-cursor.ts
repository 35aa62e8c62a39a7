import { textRuleBroken } from "@tristate/core";
import type { IntentSummary } from "./intent-view.ts";
import { QueryInputError } from "./query-input.ts";

/**
 * The cursor of the record lists (`listIntents`, `searchByIdentity`): the last item's (created_at
 * epoch ms, key), base64url JSON.
 */
export function encodeCursor(item: Pick<IntentSummary, "createdAtEpochMs" | "key">): string {
  return Buffer.from(JSON.stringify([item.createdAtEpochMs, item.key]), "utf8").toString("base64url");
}

/** The latest instant a JavaScript Date holds (ECMA-262: 8.64e15 ms from the epoch). */
const MAX_DATE_EPOCH_MS = 8.64e15;

/**
 * Reads a cursor of {@link encodeCursor}.
 * @throws QueryInputError (field `cursor`) when it is not one — also a forged one whose time no Date
 *   holds or whose key PostgreSQL could not take (NUL, a lone surrogate), which would fail the query.
 */
export function decodeCursor(cursor: string): { createdAt: Date; key: string } {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      Number.isInteger(value[0]) &&
      value[0] >= 0 &&
      value[0] <= MAX_DATE_EPOCH_MS &&
      typeof value[1] === "string" &&
      textRuleBroken(value[1]) === null
    ) {
      return { createdAt: new Date(value[0] as number), key: value[1] };
    }
  } catch {
    // fall through
  }
  throw new QueryInputError("cursor", "is not a cursor returned by this list");
}
