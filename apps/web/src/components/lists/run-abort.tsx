"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useId, useRef, useState } from "react";
import { RequestIdLine } from "~/components/states";
import { StatusBadge } from "~/components/status-badge";
import { abortLabel, abortUnavailable, operatorAbortSummary, type RunRecordState } from "~/lib/abort-summary";
import { useTRPC } from "~/trpc/react";
import type { RouterOutputs } from "~/trpc/types";

/** What `runs.operatorAbort` answers: the saga's report. */
export type AbortReport = RouterOutputs["runs"]["operatorAbort"];

/**
 * The abort's report in an operator's words (what was reversed, what failed, what needs a person),
 * per step (latest first) its status, outcome and compensation, and what the agent was told.
 */
export function AbortReportView({ report }: { report: AbortReport }) {
  const summary = operatorAbortSummary(report);
  return (
    <section className="panel" aria-label="Abort report" data-testid="abort-report">
      <h2>Abort report</h2>
      <p data-testid="abort-counts">
        Undone: {report.undone} · Waiting for steps in flight (undone when they settle): {report.inFlight} · Waiting for
        a person: {report.needsHuman}
      </p>
      <p>
        <strong>{report.complete ? "Complete." : "Not complete."}</strong>{" "}
        <span data-testid="abort-summary">
          <NoWrapIds text={summary} ids={report.steps.map((s) => s.stepId)} />
        </span>
      </p>
      <details className="small">
        <summary>The summary an agent would read</summary>
        <p data-testid="agent-summary">{report.summary}</p>
      </details>
      <div className="table-wrap">
        <table aria-label="Abort report steps">
          <thead>
            <tr>
              <th scope="col">Step</th>
              <th scope="col">Tool</th>
              <th scope="col">Status</th>
              <th scope="col">Outcome</th>
              <th scope="col">Compensation</th>
              <th scope="col">What happened</th>
            </tr>
          </thead>
          <tbody>
            {report.steps.map((step) => (
              <tr key={step.key} data-testid="abort-step" data-outcome={step.outcome}>
                <td className="mono nowrap">{step.stepId}</td>
                <td>{step.tool}</td>
                <td>
                  <StatusBadge status={step.status} />
                </td>
                <td>{step.outcome.replaceAll("_", " ")}</td>
                <td>{step.compensation ? <StatusBadge status={step.compensation.status} /> : "–"}</td>
                <td className="small">{step.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** `text` with each of `ids` kept on one line (a step id never wraps at its hyphen). */
function NoWrapIds({ text, ids }: { text: string; ids: string[] }) {
  const unique = [...new Set(ids)].filter(Boolean).sort((a, b) => b.length - a.length);
  if (!unique.length) return <>{text}</>;
  const pattern = new RegExp(`(${unique.map((id) => id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")})`);
  return (
    <>
      {text.split(pattern).map((part, i) =>
        i % 2 === 1 ? (
          // biome-ignore lint/suspicious/noArrayIndexKey: the split's parts are positional and never reorder
          <span key={i} className="nowrap">
            {part}
          </span>
        ) : (
          part
        ),
      )}
    </>
  );
}

/**
 * "Abort run" for operators: a confirmation that states the consequence and asks for a reason, then
 * `runs.operatorAbort` (the saga: reconcile, compensate confirmed effects latest first, queue what a
 * person must decide), audited; shows the report. Each opening of the dialog has its own
 * `operatorActionId`, so a retry of the same confirmation writes one audit entry. Aborting again is
 * harmless (the compensations replay).
 */
export function RunAbort({
  runId,
  tenant,
  records,
}: {
  runId: string;
  tenant: string | undefined;
  /** The run's records as `runs.get` reads them (whether it was already aborted). */
  records: RunRecordState[];
}) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const abort = useMutation(trpc.runs.operatorAbort.mutationOptions());
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState("");
  const [operatorActionId, setOperatorActionId] = useState(() => crypto.randomUUID());
  const dialogRef = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const reasonId = useId();

  useEffect(() => {
    const dialog = dialogRef.current;
    if (open && dialog && !dialog.open) dialog.showModal();
    if (!open && dialog?.open) dialog.close();
  }, [open]);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (abort.isPending || !reason.trim()) return;
    try {
      await abort.mutateAsync({ runId, note: reason.trim(), operatorActionId, ...(tenant ? { tenant } : {}) });
      setOpen(false);
      // The step table shows the abort's new states (compensations, resolutions, the human queue) at once.
      await queryClient.invalidateQueries(trpc.runs.get.pathFilter());
      void queryClient.invalidateQueries(trpc.queue.list.pathFilter());
      void queryClient.invalidateQueries(trpc.stats.attention.pathFilter());
      void queryClient.invalidateQueries(trpc.runs.list.pathFilter());
      void queryClient.invalidateQueries(trpc.audit.list.pathFilter());
      void queryClient.invalidateQueries(trpc.intents.pathFilter());
    } catch {
      // shown in the dialog
    }
  }

  const unavailable = abortUnavailable(records, abort.data);
  const label = abortLabel(records);
  return (
    <>
      <div className="actions">
        {unavailable ? (
          <span className="small muted" data-testid="abort-unavailable">
            {unavailable}
          </span>
        ) : null}
        <button
          type="button"
          className="danger"
          disabled={unavailable !== null}
          title={unavailable ?? undefined}
          onClick={() => {
            setOperatorActionId(crypto.randomUUID());
            setOpen(true);
          }}
        >
          {label}
        </button>
      </div>
      {open ? (
        <dialog ref={dialogRef} aria-labelledby={titleId} onClose={() => setOpen(false)}>
          <form onSubmit={submit}>
            <h2 id={titleId}>
              {label === "Undo run…" ? "Undo" : "Abort"} run {runId}?
            </h2>
            <p>
              Unsettled calls of this run are reconciled first; then every confirmed effect is undone by its
              compensation, latest step first (each a tool call of its own). Irreversible effects are corrected or put
              in the human queue. Effects that are not confirmed are never compensated.
            </p>
            <label className="field" htmlFor={reasonId}>
              <span>Reason</span>
            </label>
            <textarea
              id={reasonId}
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              required
              maxLength={2000}
              placeholder="Why (kept in the audit log)"
            />
            {abort.error ? (
              <div role="alert" className="error">
                {abort.error.message} Aborting again is safe: compensations replay, they never run twice.
                <RequestIdLine error={abort.error} />
              </div>
            ) : null}
            {abort.isPending ? <p className="loading">Aborting…</p> : null}
            <div className="dialog-buttons">
              <button type="button" onClick={() => setOpen(false)}>
                Cancel
              </button>
              <button type="submit" className="primary" disabled={abort.isPending}>
                Confirm abort
              </button>
            </div>
          </form>
        </dialog>
      ) : null}
      {abort.data ? <AbortReportView report={abort.data} /> : null}
    </>
  );
}
