/**
 * Reading the state of what a declarative probe found (DESIGN.md rule 5a; issue 21 §5): an item
 * found proves the request was delivered, not that the effect happened. The probe's `state` says
 * which values of which field mean done, failed or in progress; the answer becomes the core's probe
 * answer — the item (done or in progress: SUCCEEDED `found`), `refusedUnderKey` (failed: no effect,
 * the item kept as evidence) or `foundStateUnknown` (cannot tell: never SUCCEEDED). Shared by the
 * HTTP and MCP formats.
 */
import { foundStateUnknown, readPath, refusedUnderKey } from "@tristate/core";
import type { ProbeState } from "./schema.ts";

/** What one item's state means, by the probe's declaration. */
type Meaning = "done" | "pending" | "failed" | "unclear";

function meaningOf(state: Exclude<ProbeState, "always_done">, item: unknown): Meaning {
  const value = readPath(item, state.field);
  const is = (list: readonly unknown[] | undefined) => (list ?? []).some((v) => v === value);
  if (is(state.done)) return "done";
  if (is(state.pending)) return "pending";
  if (is(state.failed)) return "failed";
  return "unclear";
}

/**
 * What the probe's find says about the effect, read with its `state`.
 * @param state the probe's `state`; undefined when it declares none (then nothing found proves the effect).
 * @param items what the probe found: every item of a `non_empty_array`, else the one answer (at least one).
 * @param label `key probe` or `identity probe`, for the messages.
 * @returns the item to settle on (done, else in progress), `refusedUnderKey` when every item is in a
 *   failed state (the first one as evidence), or `foundStateUnknown` when the probe declares no
 *   state or some item's state is none of the declared values (and none is done or in progress).
 */
export function answerFromState(state: ProbeState | undefined, items: readonly unknown[], label: string): unknown {
  const first = items[0];
  if (state === "always_done") return first;
  if (state === undefined) {
    return foundStateUnknown(
      first,
      `the ${label} declares no state (which values of which field mean done, failed or in progress), so an item found proves delivery only`,
    );
  }
  const meanings = items.map((item) => meaningOf(state, item));
  for (const wanted of ["done", "pending", "unclear"] as const) {
    const i = meanings.indexOf(wanted);
    if (i < 0) continue;
    const item = items[i];
    if (wanted !== "unclear") return item;
    const value = JSON.stringify(readPath(item, state.field) ?? null);
    return foundStateUnknown(item, `${state.field} = ${value} is none of the ${label}'s declared states`);
  }
  const value = JSON.stringify(readPath(first, state.field) ?? null);
  return refusedUnderKey(
    `the ${label} found the request's item with ${state.field} = ${value}, a failed state: it was processed and did nothing`,
    undefined,
    first,
  );
}
