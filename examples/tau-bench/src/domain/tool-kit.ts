/**
 * Shared pieces of the tool implementations: the tool function type, typed argument access and the
 * item-presence check used by several retail tools (BEHAVIOUR.md §3).
 */
import { getDict, getKey, getList, keyError, type PyDict, PyError, type PyNumber, type PyValue } from "./py-json.ts";
import { num } from "./py-number.ts";

/** A tool: a pure function over an in-memory database (mutated by write tools) returning its output. */
export type ToolFn<Db> = (db: Db, args: PyDict) => string | null;

/** A string argument (the caller validated types against tools.json). */
export function argStr(args: PyDict, name: string): string {
  const v = args.get(name);
  if (typeof v !== "string") throw new PyError(`argument '${name}' must be a string`);
  return v;
}

/** A list-of-strings argument. */
export function argStrList(args: PyDict, name: string): string[] {
  const v = args.get(name);
  if (!Array.isArray(v) || !v.every((x) => typeof x === "string"))
    throw new PyError(`argument '${name}' must be a list`);
  return v as string[];
}

/** A list-of-objects argument. */
export function argDictList(args: PyDict, name: string): PyDict[] {
  const v = args.get(name);
  if (!Array.isArray(v) || !v.every((x) => x instanceof Map)) throw new PyError(`argument '${name}' must be a list`);
  return v as PyDict[];
}

/** A numeric argument. */
export function argNum(args: PyDict, name: string): PyNumber {
  return num(args.get(name));
}

/** `d[key]` that must be a string. */
export function getStr(d: PyValue | undefined, key: string): string {
  const v = getKey(d, key);
  if (typeof v !== "string") throw new PyError(`${key} is not a string`);
  return v;
}

/** `d[key]` that must be a number. */
export function getNum(d: PyValue | undefined, key: string): PyNumber {
  return num(getKey(d, key));
}

/** `d[key]` that must be a dict, raising KeyError when missing. */
export function lookup(d: PyDict, key: string): PyDict {
  const v = d.get(key);
  if (v === undefined) throw keyError(key);
  if (!(v instanceof Map)) throw new PyError(`${key} is not a dict`);
  return v;
}

/** The `item_id`s of an order's items, in order. */
export function orderItemIds(order: PyDict): string[] {
  return getList(order, "items").map((it) => getStr(it, "item_id"));
}

/** The item-presence check: the first id that occurs more often in `itemIds` than in the order, if any. */
export function missingItem(order: PyDict, itemIds: readonly string[]): string | undefined {
  const have = orderItemIds(order);
  const count = (xs: readonly string[], x: string) => xs.filter((y) => y === x).length;
  return itemIds.find((x) => count(itemIds, x) > count(have, x));
}

/** The user's payment methods dict. */
export function paymentMethods(user: PyDict): PyDict {
  return getDict(user, "payment_methods");
}

/** Python's plain string sort (code-point order; equal to UTF-16 order for BMP text). */
export function sortedStrings(xs: readonly string[]): string[] {
  return [...xs].sort();
}
