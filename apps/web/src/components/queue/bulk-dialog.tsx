"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { TRPCClientError } from "@trpc/client";
import { type FormEvent, useId, useState } from "react";
import { useModalDialog } from "~/components/use-modal-dialog";
import { countOf } from "~/lib/format";
import { actionLabel, actionUnavailable, toolCompensation } from "~/lib/status";
import { winnerOf } from "~/lib/winner";
import { useTRPC } from "~/trpc/react";
import type { OperatorAction, QueueItem } from "~/trpc/types";

/** The bulk actions: settling what happened (a resend or a compensation is decided one record at a time). */
export const BULK_ACTIONS: readonly OperatorAction[] = ["confirm_effect", "confirm_no_effect"];

type Outcome =
  | { kind: "done"; status: string }
  | { kind: "conflict"; by: string }
  | { kind: "failed"; message: string };

/**
 * One action on several queue records: each record is still resolved on its own — its own
 * compare-and-set (`expectedVersion`), its own reason and its own `operatorActionId` (kept for the
 * dialog's life, so confirming again after a failure never acts twice). Shows each record's outcome.
 */
export function BulkDialog({
  items: listed,
  action,
  onClose,
  onDone,
}: {
  items: QueueItem[];
  action: OperatorAction;
  /** `acted`: whether any record was resolved (the caller clears its selection then). */
  onClose: (acted: boolean) => void;
  onDone: (message: string) => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  // The records as listed when the dialog opened: resolved ones leave the queue, not this dialog.
  const [items] = useState(listed);
  const resolve = useMutation(trpc.queue.resolve.mutationOptions());
  const dialogRef = useModalDialog();
  const titleId = useId();
  const [actionIds] = useState(() => new Map(items.map((i) => [i.key, crypto.randomUUID()])));
  const [reasons, setReasons] = useState<Record<string, string>>({});
  const [outcomes, setOutcomes] = useState<Record<string, Outcome>>({});
  const [busy, setBusy] = useState(false);
  const tools = useQuery({ ...trpc.tools.list.queryOptions(), staleTime: 60_000 });
  const eligible = items.filter(
    (i) => actionUnavailable(action, { ...i, ...toolCompensation(tools.data, i.tool) }) === null,
  );

  const firstReason = reasons[eligible[0]?.key ?? ""]?.trim() ?? "";

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    const next: Record<string, Outcome> = { ...outcomes };
    for (const item of eligible) {
      if (next[item.key]?.kind === "done" || next[item.key]?.kind === "conflict") continue;
      const note = reasons[item.key]?.trim();
      if (!note) continue;
      try {
        const res = await resolve.mutateAsync({
          key: item.key,
          action,
          note,
          expectedVersion: item.version,
          operatorActionId: actionIds.get(item.key) ?? crypto.randomUUID(),
        });
        next[item.key] = { kind: "done", status: res.record.status };
      } catch (error) {
        const winner = winnerOf(error instanceof TRPCClientError ? error.data : undefined);
        next[item.key] = winner
          ? { kind: "conflict", by: winner.actor }
          : { kind: "failed", message: error instanceof Error ? error.message : String(error) };
      }
      setOutcomes({ ...next });
    }
    setBusy(false);
    await Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.queue.list.queryKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.stats.attention.queryKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.audit.list.queryKey() }),
    ]);
    const done = Object.values(next).filter((o) => o.kind === "done").length;
    if (done === eligible.length)
      onDone(`${actionLabel(action)}: ${countOf(done, "record")} resolved, each with its own reason.`);
  }

  return (
    <dialog
      ref={dialogRef}
      aria-labelledby={titleId}
      onClose={() => onClose(Object.keys(outcomes).length > 0)}
      onCancel={() => onClose(Object.keys(outcomes).length > 0)}
      className="wide"
    >
      <form onSubmit={submit}>
        <h2 id={titleId}>
          {actionLabel(action)} for {countOf(eligible.length, "record")}?
        </h2>
        <p>
          Each record is resolved on its own, only if nobody changed it since it was listed (its version), with the
          reason given for it.{" "}
          {action === "confirm_effect" ? "Each becomes SUCCEEDED." : "Each becomes FAILED_NO_EFFECT."}
        </p>
        {items.length > eligible.length ? (
          <p className="warning">
            {items.length - eligible.length === 1
              ? "1 selected record cannot take this action and is left out."
              : `${items.length - eligible.length} selected records cannot take this action and are left out.`}
          </p>
        ) : null}
        <ol className="bulk-list">
          {eligible.map((item, index) => {
            const outcome = outcomes[item.key];
            return (
              <li key={item.key} data-testid="bulk-item" data-key={item.key}>
                <label className="field" htmlFor={`reason-${item.key}`}>
                  <span>
                    Reason for {item.effect}{" "}
                    <span className="mono small">
                      ({item.key.slice(0, 12)}…, v{item.version})
                    </span>
                  </span>
                </label>
                <textarea
                  id={`reason-${item.key}`}
                  value={reasons[item.key] ?? ""}
                  onChange={(e) => setReasons((r) => ({ ...r, [item.key]: e.target.value }))}
                  required
                  maxLength={2000}
                  disabled={outcome?.kind === "done" || outcome?.kind === "conflict"}
                />
                {index === 0 && eligible.length > 1 ? (
                  <button
                    type="button"
                    disabled={!firstReason}
                    onClick={() =>
                      setReasons((r) =>
                        Object.fromEntries(eligible.map((i) => [i.key, r[i.key]?.trim() ? r[i.key]! : firstReason])),
                      )
                    }
                  >
                    Use this reason where none is given
                  </button>
                ) : null}
                {outcome ? (
                  <p
                    role="status"
                    className={outcome.kind === "done" ? "small" : "error small"}
                    data-testid="bulk-outcome"
                  >
                    {outcome.kind === "done"
                      ? `Resolved: now ${outcome.status}.`
                      : outcome.kind === "conflict"
                        ? `Already resolved by ${outcome.by}: nothing changed.`
                        : `${outcome.message} Confirm again: the same action id is reused.`}
                  </p>
                ) : null}
              </li>
            );
          })}
        </ol>
        <div className="dialog-buttons">
          <button type="button" onClick={() => onClose(Object.keys(outcomes).length > 0)}>
            {Object.keys(outcomes).length ? "Close" : "Cancel"}
          </button>
          <button type="submit" className="primary" disabled={busy || eligible.length === 0}>
            Confirm {eligible.length}
          </button>
        </div>
      </form>
    </dialog>
  );
}
