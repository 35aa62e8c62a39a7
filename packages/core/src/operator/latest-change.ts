import type { IntentRecord } from "../intent-store.ts";
import type { OperatorStore } from "../operator-store.ts";
import type { Runtime } from "../runtime.ts";
import { shownResolution } from "../statuses.ts";
import { OperatorActionError } from "./errors.ts";
import { stateName } from "./options.ts";

/** Who made the latest change of a record, for a refused stale action. */
export interface ResolutionWinner {
  /** `operator`: an audited operator action; `executor`: the executor itself (a call, a probe, the sweeper). */
  by: "operator" | "executor";
  /** The operator's key name, or `executor`. */
  actor: string;
  /** The operator's action, or what the executor did (its resolution, else the record's status). */
  action: string;
  /** When, epoch ms. */
  at: number;
  /** The operator's note, or a sentence saying what the executor did. */
  note: string;
}

/**
 * The refusal of a stale action, naming who made the latest change and how.
 * @returns an `OperatorActionError` `STALE_VERSION` (with `detail.winner` and `detail.current`) to throw.
 */
export async function staleError(
  rt: Runtime,
  store: OperatorStore,
  current: IntentRecord,
  expectedVersion: number,
): Promise<OperatorActionError> {
  const now = rt.clock.nowEpochMs();
  const winner = await latestChange(store, current);
  const how =
    winner.by === "operator"
      ? `operator ${winner.actor} chose ${winner.action} at ${new Date(winner.at).toISOString()} (note: "${winner.note}")`
      : `the executor changed it at ${new Date(winner.at).toISOString()}: ${winner.note}`;
  return new OperatorActionError(
    "STALE_VERSION",
    `record ${current.key} changed since version ${expectedVersion} (now version ${current.version}, ${stateName(current, now)}): ${how}; nothing was changed`,
    {
      field: "expectedVersion",
      detail: {
        winner: { ...winner },
        current: {
          status: current.status,
          resolution: shownResolution(current),
          needsHuman: current.needsHuman,
          version: current.version,
        },
      },
    },
  );
}

/**
 * Who made the record's latest change: the newest audited operator action when the record is still
 * as that action left it (for a resend, also its outcome write), else the executor itself.
 */
export async function latestChange(store: OperatorStore, current: IntentRecord): Promise<ResolutionWinner> {
  const last = await store.latestAudit(current.key);
  if (last) {
    const own = current.version - last.after.version;
    if (own === 0 || (own === 1 && last.action === "resend_same_key")) {
      return { by: "operator", actor: last.actorName, action: last.action, at: last.atEpochMs, note: last.note };
    }
  }
  return {
    by: "executor",
    actor: "executor",
    action: shownResolution(current) ?? current.status,
    at: current.updatedAtEpochMs,
    note: executorNote(current),
  };
}

function executorNote(record: IntentRecord): string {
  if (record.needsHuman)
    return `reconciliation could not decide and sent it to the human queue (${record.error?.code ?? "needs_human"})`;
  switch (record.status) {
    case "SUCCEEDED":
      switch (record.resolution) {
        case "found":
          return "a probe found the effect";
        case "absent_resent":
          return "probes found nothing, so it was resent once with the same key, and it succeeded";
        default:
          return "the call succeeded";
      }
    case "FAILED_NO_EFFECT":
      return `the call failed without effect (${record.error?.code ?? "no code"})`;
    case "PENDING":
      return `a call took it (attempt ${record.attempt}, lease until ${new Date(record.leaseUntilEpochMs).toISOString()})`;
    case "UNKNOWN":
      return `reconciliation is working on it (${record.error?.code ?? "no evidence yet"})`;
  }
}
