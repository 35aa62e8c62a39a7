import type { IntentSummary } from "./intent-view.ts";
import { QueryInputError } from "./query-input.ts";

/**
 * The cursor of the record lists (`listIntents`, `searchByIdentity`): the last item's (created_at
 * epoch ms, key), base64url JSON.
 */
export function encodeCursor(item: Pick<IntentSummary, "createdAtEpochMs" | "key">): string {
  return Buffer.from(JSON.stringify([item.createdAtEpochMs, item.key]), "utf8").toString("base64url");
}

/**
 * Reads a cursor of {@link encodeCursor}.
 * @throws QueryInputError (field `cursor`) when it is not one.
 */
export function decodeCursor(cursor: string): { createdAt: Date; key: string } {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      Number.isInteger(value[0]) &&
      value[0] >= 0 &&
      typeof value[1] === "string"
    ) {
      return { createdAt: new Date(value[0] as number), key: value[1] };
    }
  } catch {
    // fall through
  }
  throw new QueryInputError("cursor", "is not a cursor returned by this list");
}
