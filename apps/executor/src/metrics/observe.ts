/**
 * Counting at the ports (issue 23 §1): every path that answers a call or writes an outcome goes
 * through a tenant's executor, intent store or operator store (tenants.ts), so these decorators count
 * them all — tRPC and MCP calls, the sweeper, late answers, probe reruns, operators — without a
 * counting line in each path. They change nothing of what the ports do or answer.
 */
import {
  type CallInput,
  type Executor,
  type IntentEvent,
  type IntentPatch,
  type IntentRecord,
  type IntentStore,
  isCompensationStep,
  shownResolution,
} from "@tristate/core";
import type { OperatorLog } from "@tristate/db";
import type { TristateMetrics } from "./types.ts";

/** Which tools are counted: catalog tools only (labels stay bounded; internal tools are not). */
export type CountedTool = (tool: string) => boolean;

/**
 * `executor` with its `call` counted: `tristate_calls_total` by the outcome answered and
 * `tristate_call_duration_seconds`, for catalog tools (a call refused before an envelope — a thrown
 * error — is not counted).
 */
export function countedExecutor(executor: Executor, tenant: string, metrics: TristateMetrics): Executor {
  const call = async (input: CallInput) => {
    const started = performance.now();
    const envelope = await executor.call(input);
    if (executor.tools.has(input.tool)) {
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
 * (step `compensate:<key>` / `correct:<key>`) counts in `tristate_compensations_total`.
 */
export function observedStore(
  store: IntentStore,
  tenant: string,
  metrics: TristateMetrics,
  counted: CountedTool,
): IntentStore {
  const update: IntentStore["update"] = async (key, expectedVersion, patch, events, nowEpochMs, options) => {
    const after = await store.update(key, expectedVersion, patch, events, nowEpochMs, options);
    if (after && counted(after.tool)) countWrite(metrics, tenant, patch, events, after);
    return after;
  };
  return bindingProxy(store, { update });
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
): void {
  const queued = events.some((e) => e.type === "needs_human") && after.needsHuman;
  if (patch.resolution) metrics.unknownResolved(tenant, after.tool, patch.resolution);
  else if (queued && after.status === "UNKNOWN") {
    const shown = shownResolution(after);
    if (shown) metrics.unknownResolved(tenant, after.tool, shown);
  }
  if (!isCompensationStep(after.stepId)) return;
  if (patch.status === "SUCCEEDED" && after.status === "SUCCEEDED" && !after.needsHuman) {
    metrics.compensationSettled(tenant, after.tool, "succeeded");
  } else if ((patch.status === "FAILED_NO_EFFECT" || queued) && failed(after)) {
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
