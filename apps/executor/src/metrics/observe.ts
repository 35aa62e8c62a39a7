/**
 * Counting at the ports (issue 23 §1): every path that answers a call or writes an outcome goes
 * through a tenant's executor, intent store or operator store (tenants.ts), so these decorators count
 * them all — tRPC and MCP calls, the sweeper, late answers, probe reruns, operators — without a
 * counting line in each path. They change nothing of what the ports do or answer.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import {
  type CallInput,
  type Executor,
  type IntentEvent,
  type IntentPatch,
  type IntentRecord,
  type IntentStore,
  isCompensationStep,
  shownResolution,
  toolKindPolicy,
} from "@tristate/core";
import type { OperatorLog } from "@tristate/db";
import type { TristateMetrics } from "./types.ts";

/** Which tools are counted: catalog tools only (labels stay bounded; internal tools are not). */
export type CountedTool = (tool: string) => boolean;

/** Set by the intent store when a call's own work writes a `created` event: a new record or attempt. */
const callSends = new AsyncLocalStorage<{ created: boolean }>();

/**
 * `executor` with its `call` counted: `tristate_calls_total` by the outcome answered and
 * `tristate_call_duration_seconds`, for catalog tools — a call that sent (its work created the
 * record, or a new attempt after FAILED_NO_EFFECT: a `created` event through {@link observedStore}),
 * a read-only call, or an UNKNOWN answered before the log told (attempt 0, `INTENT_LOG_TIMEOUT`). Not
 * counted (docs/metrics.md): a repeat of a step answered from its record — a replay, or one that
 * reconciled an UNKNOWN (that counts as a resolution) — a refusal before sending, a thrown error.
 */
export function countedExecutor(executor: Executor, tenant: string, metrics: TristateMetrics): Executor {
  const call = async (input: CallInput) => {
    const started = performance.now();
    const sends = { created: false };
    const envelope = await callSends.run(sends, () => executor.call(input));
    const tool = executor.tools.get(input.tool);
    const readOnly = tool !== undefined && !toolKindPolicy(tool.kind).hasEffect;
    const unrecorded = envelope.status === "UNKNOWN" && envelope.attempt === 0;
    if (tool && (sends.created || readOnly || unrecorded)) {
      metrics.callAnswered(tenant, input.tool, envelope.status, performance.now() - started);
    }
    return envelope;
  };
  return bindingProxy(executor, { call });
}

/**
 * `store` with its compare-and-set writes observed: a write that gives a record a resolution, or puts
 * an UNKNOWN record in the human queue (a `needs_human` event with it), counts in
 * `tristate_unknown_resolutions_total`; a write that settles a compensating or corrective record
 * (step `compensate:<key>` / `correct:<key>`) counts in `tristate_compensations_total` — judged
 * against the record as this store last returned it (every writer reads a record before its
 * compare-and-set), so a record already counted failed is not counted again.
 */
export function observedStore(
  store: IntentStore,
  tenant: string,
  metrics: TristateMetrics,
  counted: CountedTool,
): IntentStore {
  const seen = new CompensationStates();
  const update: IntentStore["update"] = async (key, expectedVersion, patch, events, nowEpochMs, options) => {
    const after = await store.update(key, expectedVersion, patch, events, nowEpochMs, options);
    if (after) noteCreated(events);
    if (after && counted(after.tool)) {
      countWrite(metrics, tenant, patch, events, after, seen.before(key, expectedVersion));
    }
    seen.note(after);
    return after;
  };
  const get: IntentStore["get"] = async (key) => seen.note(await store.get(key));
  const claim: IntentStore["claim"] = async (record, events, nowEpochMs) => {
    const result = await store.claim(record, events, nowEpochMs);
    if (result.claimed) noteCreated(events);
    seen.note(result.claimed ? result.record : result.existing);
    return result;
  };
  const claimStale: IntentStore["claimStale"] = async (options) => {
    const taken = await store.claimStale(options);
    for (const record of taken) seen.note(record);
    return taken;
  };
  return bindingProxy(store, { update, get, claim, claimStale });
}

/** The state that decides "failed" of a compensating record, by version. */
type CompensationState = Pick<IntentRecord, "version" | "status" | "needsHuman">;

/**
 * The compensating records this store returned last (at most {@link CompensationStates.LIMIT}, the
 * oldest forgotten first): the state before a write, which the write itself does not carry.
 */
class CompensationStates {
  static readonly LIMIT = 10_000;
  readonly #states = new Map<string, CompensationState>();

  /** Remembers `record` when it is a compensating record; returns it as it was. */
  note<R extends IntentRecord | null>(record: R): R {
    if (!record || !isCompensationStep(record.stepId)) return record;
    this.#states.delete(record.key);
    this.#states.set(record.key, { version: record.version, status: record.status, needsHuman: record.needsHuman });
    if (this.#states.size > CompensationStates.LIMIT) {
      const oldest = this.#states.keys().next().value;
      if (oldest !== undefined) this.#states.delete(oldest);
    }
    return record;
  }

  /** The state of `key` at `version`, or undefined when this store did not return that version. */
  before(key: string, version: number): CompensationState | undefined {
    const state = this.#states.get(key);
    return state?.version === version ? state : undefined;
  }
}

/**
 * `operators` with its audited changes observed: a change that gives a record another resolution
 * (`human_confirmed_effect`, `human_confirmed_no_effect`) counts in
 * `tristate_unknown_resolutions_total`, one that settles a compensating record in
 * `tristate_compensations_total` (the audit row carries the record before and after).
 */
export function observedOperators(
  operators: OperatorLog,
  tenant: string,
  metrics: TristateMetrics,
  counted: CountedTool,
): OperatorLog {
  const applyOperatorAction: OperatorLog["applyOperatorAction"] = async (change) => {
    const result = await operators.applyOperatorAction(change);
    if (result.kind === "applied" && counted(result.record.tool)) {
      const { before } = result.audit;
      const after = result.record;
      if (after.resolution !== null && after.resolution !== before.resolution) {
        metrics.unknownResolved(tenant, after.tool, after.resolution);
      }
      if (isCompensationStep(after.stepId)) {
        if (after.status === "SUCCEEDED" && !after.needsHuman && before.status !== "SUCCEEDED") {
          metrics.compensationSettled(tenant, after.tool, "succeeded");
        } else if (failed(after) && !failed(before)) {
          metrics.compensationSettled(tenant, after.tool, "failed");
        }
      }
    }
    return result;
  };
  return bindingProxy(operators, { applyOperatorAction });
}

/** Tells the call counted by {@link countedExecutor}, if any, that its work created a record or attempt. */
function noteCreated(events: readonly IntentEvent[]): void {
  const sends = callSends.getStore();
  if (sends && events.some((e) => e.type === "created")) sends.created = true;
}

/** A compensating record that failed as the rollups count it: FAILED_NO_EFFECT, or waiting for a person. */
function failed(record: Pick<IntentRecord, "status" | "needsHuman">): boolean {
  return record.status === "FAILED_NO_EFFECT" || record.needsHuman;
}

function countWrite(
  metrics: TristateMetrics,
  tenant: string,
  patch: IntentPatch,
  events: readonly IntentEvent[],
  after: IntentRecord,
  before: CompensationState | undefined,
): void {
  const queued = events.some((e) => e.type === "needs_human") && after.needsHuman;
  if (patch.resolution) metrics.unknownResolved(tenant, after.tool, patch.resolution);
  else if (queued && after.status === "UNKNOWN") {
    const shown = shownResolution(after);
    if (shown) metrics.unknownResolved(tenant, after.tool, shown);
  }
  if (!isCompensationStep(after.stepId)) return;
  // Against the state before when known; else by what the write itself did.
  const succeeded = (r: Pick<IntentRecord, "status" | "needsHuman">) => r.status === "SUCCEEDED" && !r.needsHuman;
  if (succeeded(after) && (before ? !succeeded(before) : patch.status === "SUCCEEDED")) {
    metrics.compensationSettled(tenant, after.tool, "succeeded");
  } else if (failed(after) && (before ? !failed(before) : patch.status === "FAILED_NO_EFFECT" || queued)) {
    metrics.compensationSettled(tenant, after.tool, "failed");
  }
}

/**
 * A view of `target` whose `overrides` replace its methods of the same name; every other method is
 * the target's own, bound to it (private fields keep working), every other property read through.
 */
function bindingProxy<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(t, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T];
      const value = Reflect.get(t, property, t);
      return typeof value === "function" ? value.bind(t) : value;
    },
  });
}
