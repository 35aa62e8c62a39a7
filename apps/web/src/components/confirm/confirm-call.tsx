"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useId, useState } from "react";
import { useCanOperate } from "~/components/session-context";
import { EmptyState, RequestIdLine } from "~/components/states";
import { useTenantFilter } from "~/components/tenant-filter";
import { Time } from "~/components/time-zone-toggle";
import { useModalDialog } from "~/components/use-modal-dialog";
import { formatJson } from "~/lib/format";
import { useTRPC } from "~/trpc/react";
import type { RouterInputs, RouterOutputs } from "~/trpc/types";

type CallToConfirm = RouterInputs["confirmations"]["preview"];
type Preview = RouterOutputs["confirmations"]["preview"];
type Issued = RouterOutputs["confirmations"]["issue"];

/** The arguments text as a JSON object, or the rule it breaks. */
function parseArgs(text: string): { args: Record<string, unknown> } | { problem: string } {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      return { args: value as Record<string, unknown> };
    }
  } catch {
    // reported below
  }
  return { problem: 'Arguments must be a JSON object, e.g. {"order_id": "P-7"}.' };
}

/** The confirmed call's facts and each argument as the token binds it (secrets as the API masked them). */
export function ConfirmedCallFacts({
  confirms,
  idempotencyKey,
}: {
  confirms: Preview["confirms"];
  idempotencyKey: string;
}) {
  const args =
    typeof confirms.args === "object" && confirms.args !== null && !Array.isArray(confirms.args)
      ? Object.entries(confirms.args)
      : [["(arguments)", confirms.args] as const];
  return (
    <>
      <dl className="facts">
        <dt>Tool</dt>
        <dd>{confirms.tool}</dd>
        <dt>Run</dt>
        <dd className="mono">{confirms.runId}</dd>
        <dt>Step</dt>
        <dd className="mono">{confirms.stepId}</dd>
        <dt>Tenant</dt>
        <dd>{confirms.tenant}</dd>
        <dt>Idempotency key</dt>
        <dd className="mono">{idempotencyKey}</dd>
      </dl>
      <div className="table-wrap">
        <table aria-label="Arguments confirmed">
          <thead>
            <tr>
              <th scope="col">Argument</th>
              <th scope="col">Value confirmed</th>
            </tr>
          </thead>
          <tbody>
            {args.map(([name, value]) => (
              <tr key={name} data-testid="confirmed-arg" data-arg={name}>
                <td className="mono">{name}</td>
                <td className="mono">{typeof value === "string" ? value : formatJson(value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/**
 * The dialog that shows what a token will confirm (`confirmations.preview`) before the operator
 * issues it (`confirmations.issue`): the call and every argument value, which the token binds.
 */
function ConfirmDialog({
  call,
  preview,
  onClose,
  onIssued,
}: {
  call: CallToConfirm;
  preview: Preview;
  onClose: () => void;
  onIssued: (issued: Issued) => void;
}) {
  const trpc = useTRPC();
  const issue = useMutation(trpc.confirmations.issue.mutationOptions());
  const dialogRef = useModalDialog();
  const titleId = useId();

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (issue.isPending) return;
    try {
      onIssued(await issue.mutateAsync(call));
    } catch {
      // shown in the dialog
    }
  }

  return (
    <dialog ref={dialogRef} aria-labelledby={titleId} onClose={onClose} onCancel={onClose}>
      <form onSubmit={submit}>
        <h2 id={titleId}>Confirm this call?</h2>
        <p>
          The token confirms this run, step and tool with exactly these argument values. A call with any other value is
          refused before anything is sent, naming the argument that differs.
        </p>
        <ConfirmedCallFacts confirms={preview.confirms} idempotencyKey={preview.idempotencyKey} />
        {issue.error ? (
          <div role="alert" className="error">
            {issue.error.message}
            <RequestIdLine error={issue.error} />
          </div>
        ) : null}
        <div className="dialog-buttons">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={issue.isPending}>
            Issue token
          </button>
        </div>
      </form>
    </dialog>
  );
}

/**
 * "Confirm a call" (operators): the call an agent was refused for (`CONFIRMATION_REQUIRED`) — tool,
 * run, step and arguments — then a dialog showing what the token will confirm, then the token to hand
 * to the agent (or the end user's client) with its expiry.
 */
export function ConfirmCallView() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const canOperate = useCanOperate();
  const tenant = useTenantFilter();
  const tools = useQuery({ ...trpc.tools.list.queryOptions(), staleTime: 60_000, enabled: canOperate });
  const [tool, setTool] = useState("");
  const [runId, setRunId] = useState("");
  const [stepId, setStepId] = useState("");
  const [argsText, setArgsText] = useState("{}");
  const [problem, setProblem] = useState<string | null>(null);
  const [reviewing, setReviewing] = useState<{ call: CallToConfirm; preview: Preview } | null>(null);
  const [issued, setIssued] = useState<Issued | null>(null);
  const [busy, setBusy] = useState(false);
  const ids = { tool: useId(), run: useId(), step: useId(), args: useId() };

  if (!canOperate) {
    return <EmptyState>Only operators confirm calls.</EmptyState>;
  }
  const choices = (tools.data ?? []).filter((t) => t.kind !== "read_only").map((t) => t.name);

  async function review(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (busy) return;
    const parsed = parseArgs(argsText);
    if ("problem" in parsed) {
      setProblem(parsed.problem);
      return;
    }
    const call: CallToConfirm = {
      tool,
      runId: runId.trim(),
      stepId: stepId.trim(),
      args: parsed.args,
      ...tenant.input,
    };
    setBusy(true);
    setProblem(null);
    try {
      const preview = await queryClient.fetchQuery({ ...trpc.confirmations.preview.queryOptions(call), staleTime: 0 });
      setIssued(null);
      setReviewing({ call, preview });
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <h1>Confirm a call</h1>
      <form className="panel" aria-label="Call to confirm" onSubmit={review}>
        <p className="small">
          Enter the call the agent was refused for (<span className="mono">CONFIRMATION_REQUIRED</span>): its tool, run,
          step and arguments. You will see what the token confirms before issuing it.
        </p>
        <label className="field" htmlFor={ids.tool}>
          <span>Tool</span>
        </label>
        <select id={ids.tool} value={tool} onChange={(e) => setTool(e.target.value)} required>
          <option value="">Choose a tool…</option>
          {choices.map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
        <label className="field" htmlFor={ids.run}>
          <span>Run id</span>
        </label>
        <input id={ids.run} value={runId} onChange={(e) => setRunId(e.target.value)} required maxLength={200} />
        <label className="field" htmlFor={ids.step}>
          <span>Step id</span>
        </label>
        <input id={ids.step} value={stepId} onChange={(e) => setStepId(e.target.value)} required maxLength={200} />
        <label className="field" htmlFor={ids.args}>
          <span>Arguments (JSON)</span>
        </label>
        <textarea
          id={ids.args}
          className="mono"
          value={argsText}
          onChange={(e) => setArgsText(e.target.value)}
          rows={6}
        />
        {problem ? (
          <div role="alert" className="error">
            {problem}
          </div>
        ) : null}
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            Review
          </button>
        </div>
      </form>
      {reviewing ? (
        <ConfirmDialog
          call={reviewing.call}
          preview={reviewing.preview}
          onClose={() => setReviewing(null)}
          onIssued={(answer) => {
            setIssued(answer);
            setReviewing(null);
          }}
        />
      ) : null}
      {issued ? (
        <section className="panel" aria-label="Confirmation token">
          <h2>Confirmation token</h2>
          <p>
            Valid until <Time epochMs={issued.expiresAtEpochMs} />. Pass it as{" "}
            <span className="mono">confirmationToken</span> (MCP:{" "}
            <span className="mono">_meta["io.tristate/confirmationToken"]</span>) with exactly the call below.
          </p>
          <pre className="mono" data-testid="confirmation-token">
            {issued.token}
          </pre>
          <ConfirmedCallFacts confirms={issued.confirms} idempotencyKey={issued.idempotencyKey} />
        </section>
      ) : null}
    </>
  );
}
