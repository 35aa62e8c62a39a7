/**
 * The members of one of the executor's closed unions (statuses, resolutions, operator actions), as a
 * runtime list in the dashboard. The dashboard imports nothing of `@tristate/core` at runtime, only
 * types through the executor's router, so it cannot take the core's `as const` arrays: it names each
 * member as a key of an object typed `Record<Union, true>` instead, and the compiler then refuses a
 * member the union lacks (excess property) or a member of the union left out (missing property).
 * @param members every member of `T` once, as keys, in the order the list should have.
 * @returns the members in that order.
 * @example const STATUSES = everyMember<IntentStatus>({ PENDING: true, SUCCEEDED: true, FAILED_NO_EFFECT: true, UNKNOWN: true });
 */
export function everyMember<T extends string>(members: Record<T, true>): readonly T[] {
  return Object.keys(members) as T[];
}
