/** A JSON value as stored in the intent log (what `JSON.parse` can return). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue };

/**
 * Converts any value to a plain JSON value (dropping `undefined`, functions and symbols the way
 * `JSON.stringify` does). `undefined` stays `undefined` so "no result" and `null` remain distinct.
 * @throws TypeError for values JSON cannot hold (BigInt, cycles).
 */
export function toJson(value: unknown): JsonValue | undefined {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  return text === undefined ? undefined : (JSON.parse(text) as JsonValue);
}
