"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { TRPCClientError } from "@trpc/client";
import { type FormEvent, useId, useRef, useState } from "react";
import { RequestIdLine } from "~/components/states";
import { Time } from "~/components/time-zone-toggle";
import { useModalDialog } from "~/components/use-modal-dialog";
import { formatDuration, formatJson } from "~/lib/format";
import { actionLabel } from "~/lib/status";
import { type Winner, winnerOf } from "~/lib/winner";
import { useTRPC } from "~/trpc/react";
import type { OperatorAction, QueueItem } from "~/trpc/types";

/** What the action will do, in words, for the confirmation. */
function consequence(action: OperatorAction, item: QueueItem): string {
  switch (action) {
    case "confirm_effect":
      return `Record ${item.key} becomes SUCCEEDED: the effect (${item.effect}) is taken as done and will not be sent again. Agents asking with this key read that it happened.`;
    case "confirm_no_effect":
      return `Record ${item.key} becomes FAILED_NO_EFFECT: the effect (${item.effect}) is taken as never done. An agent may then safely try it again under a new key.`;
    case "resend_same_key":
      return `The request is sent to ${item.tool} again now with the same idempotency key ${item.key}; the record takes the outcome of that send.`;
    case "compensate":
      return `The effect of record ${item.key} is taken as done and undone by running its compensation below as a tool call of its own.`;
  }
}

/**
 * The confirmation of one operator action: the exact consequence, a reason, Confirm/Cancel. One
 * `operatorActionId` per opening (a retry of the same confirmation reuses it, so a double click or a
 * lost answer never acts twice). On a stale version it names who got there first and keeps the reason.
 */
export function ActionDialog({
  item,
  action,
  onClose,
  onDone,
}: {
  item: QueueItem;
  action: OperatorAction;
  onClose: () => void;
  onDone: (message: string) => void;
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const dialogRef = useModalDialog();
  const submitting = useRef(false);
  const [operatorActionId] = useState(() => crypto.randomUUID());
  const [reason, setReason] = useState("");
  const [winner, setWinner] = useState<{ winner: Winner; error: unknown } | null>(null);
  const [failure, setFailure] = useState<{ message: string; error: unknown } | null>(null);
  const titleId = useId();
  const reasonId = useId();

  const detail = useQuery({ ...trpc.intents.get.queryOptions({ key: item.key }), enabled: action === "compensate" });
  const resolve = useMutation(trpc.queue.resolve.mutationOptions());

  const refused = action === "resend_same_key" && !item.resendAllowed;

  /** After any answer (done or refused as stale): the queue, its tab count, the record and the audit refetch. */
  function refetchAfterAction() {
    return Promise.all([
      queryClient.invalidateQueries({ queryKey: trpc.queue.list.queryKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.stats.attention.queryKey() }),
      queryClient.invalidateQueries({ queryKey: trpc.intents.get.queryKey({ key: item.key }) }),
      queryClient.invalidateQueries({ queryKey: trpc.audit.list.queryKey() }),
    ]);
  }

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (submitting.current || winner || refused || !reason.trim()) return;
    submitting.current = true;
    setFailure(null);
    try {
      const res = await resolve.mutateAsync({
        key: item.key,
        action,
        note: reason.trim(),
        expectedVersion: item.version,
        operatorActionId,
      });
      await refetchAfterAction();
      onDone(
        `${actionLabel(action)}: record ${item.key} is now ${res.record.status}${res.replayed ? " (already done by this same action)" : ""}.`,
      );
    } catch (error) {
      const data = error instanceof TRPCClientError ? error.data : undefined;
      const w = winnerOf(data);
      if (w) {
        setWinner({ winner: w, error });
        void refetchAfterAction();
      } else setFailure({ message: error instanceof Error ? error.message : String(error), error });
    } finally {
      submitting.current = false;
    }
  }

  const compensation = detail.data?.record.compensation;

  return (
    <dialog ref={dialogRef} aria-labelledby={titleId} onClose={onClose} onCancel={onClose}>
      <form onSubmit={submit}>
        <h2 id={titleId}>{actionLabel(action)}?</h2>
        <p>{consequence(action, item)}</p>
        <dl className="facts">
          <dt>Idempotency key</dt>
          <dd className="mono">{item.key}</dd>
          <dt>Tool</dt>
          <dd>{item.tool}</dd>
          <dt>Effect</dt>
          <dd>{item.effect}</dd>
          <dt>Age</dt>
          <dd>{formatDuration(item.ageMs)}</dd>
          <dt>Version</dt>
          <dd>{item.version}</dd>
        </dl>
        {action === "compensate" ? (
          detail.isPending ? (
            <p className="loading">Loading the compensation…</p>
          ) : compensation ? (
            <div>
              <p>
                Compensation tool: <strong>{compensation.tool}</strong>, with these arguments:
              </p>
              <pre>{formatJson(compensation.args)}</pre>
            </div>
          ) : (
            <p className="warning">This record has no registered compensation; the executor will refuse.</p>
          )
        ) : null}
        {action === "resend_same_key" ? (
          <>
            {item.keyExpired ? (
              <p className="warning">
                This record is older than the tool's key retention: the remote may no longer recognise the key, so a
                resend may perform the effect twice.
              </p>
            ) : null}
            {item.resendWarnings.map((w) => (
              <p key={w} className="warning">
                {w}
              </p>
            ))}
            {refused ? <p className="warning">Resend is not possible: {item.resendRefusal}</p> : null}
          </>
        ) : null}
        <label className="field" htmlFor={reasonId}>
          <span>Reason</span>
        </label>
        <textarea
          id={reasonId}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          required
          maxLength={2000}
          placeholder="Why (kept in the audit log and the timeline)"
        />
        {winner ? (
          <div role="alert" className="error">
            This record was already resolved by {winner.winner.actor}
            {winner.winner.by === "operator" ? ` (${winner.winner.action})` : ""} at <Time epochMs={winner.winner.at} />
            {winner.winner.note ? `: “${winner.winner.note}”` : ""}. Nothing was changed; your reason is kept above.
            <RequestIdLine error={winner.error} />
          </div>
        ) : null}
        {failure ? (
          <div role="alert" className="error">
            {failure.message} You can confirm again: the same action id is reused, so it never acts twice.
            <RequestIdLine error={failure.error} />
          </div>
        ) : null}
        <div className="dialog-buttons">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={resolve.isPending || Boolean(winner) || refused}>
            Confirm
          </button>
        </div>
      </form>
    </dialog>
  );
}
