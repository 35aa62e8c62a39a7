import type { IntentEvent, IntentEventType } from "./intent-store.ts";
import type { JsonObject } from "./json.ts";
import type { Runtime } from "./runtime.ts";

/**
 * One event of an intent record's history, stamped with the executor's clock (epoch ms).
 * @param key the record's idempotency key.
 * @param data what the event carries (JSON); empty by default.
 */
export function event(rt: Runtime, key: string, type: IntentEventType, data: JsonObject = {}): IntentEvent {
  return { key, type, atEpochMs: rt.clock.nowEpochMs(), data };
}
