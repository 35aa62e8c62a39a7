"use client";

import { useQuery } from "@tanstack/react-query";
import { createColumnHelper } from "@tanstack/react-table";
import { type Columns, DataTable } from "~/components/data-table";
import { useLiveInterval } from "~/components/live-refresh";
import { useCanOperate } from "~/components/session-context";
import { ErrorState, Loading, NoResults } from "~/components/states";
import { useTenantFilter, withTenantColumn } from "~/components/tenant-filter";
import { Time } from "~/components/time-zone-toggle";
import { formatJson } from "~/lib/format";
import { httpStatusOf, useTRPC } from "~/trpc/react";
import type { IntentSummary, RouterOutputs } from "~/trpc/types";
import { intentColumns } from "./intent-columns";
import { RunAbort } from "./run-abort";
import { RunAbortState } from "./run-abort-state";

const col = createColumnHelper<IntentSummary & { order: number }>();
const columns: Columns<IntentSummary & { order: number }> = [
  col.accessor("order", { header: "#", meta: { numeric: true } }),
  ...(intentColumns as Columns<IntentSummary & { order: number }>).filter((c) => c.header !== "Run / step"),
  col.accessor("stepId", { header: "Step", cell: (c) => <span className="mono nowrap">{c.getValue()}</span> }),
  col.accessor("compensation", {
    header: "Compensation",
    enableSorting: false,
    cell: (c) => {
      const comp = c.getValue();
      if (!comp) return <span className="muted">–</span>;
      return (
        <details>
          <summary>{comp.tool}</summary>
          <pre>{formatJson(comp)}</pre>
        </details>
      );
    },
  }),
];

type RunPlan = NonNullable<RouterOutputs["runs"]["get"]["plan"]>;

/** The run's declared plan: each planned step and whether a record of it settled yet. */
function PlanView({ plan, done }: { plan: RunPlan; done: IntentSummary[] }) {
  const settled = (step: RunPlan["steps"][number]) =>
    done.some(
      (r) =>
        r.stepId === step.stepId &&
        r.tool === step.tool &&
        (r.status === "SUCCEEDED" || r.status === "FAILED_NO_EFFECT"),
    );
  return (
    <section aria-label="Declared plan" data-testid="run-plan">
      <h2>Declared plan</h2>
      <p className="muted small">
        Declared <Time epochMs={plan.declaredAtEpochMs} />
        {done.length === 0 ? "; the agent has made no call of this run yet." : "."}
      </p>
      <ol>
        {plan.steps.map((step) => (
          <li key={step.stepId}>
            <span className="mono">{step.stepId}</span> · {step.tool} · {settled(step) ? "done" : "not done yet"}
          </li>
        ))}
      </ol>
    </section>
  );
}

/**
 * One agent run: its steps (intent records) in the order they were created, with outcomes and
 * compensations, its declared plan and its abort (who, when, why; undone / in flight / waiting for a
 * person); operators can abort it (the saga) and read the abort report.
 */
export function RunView({ runId }: { runId: string }) {
  const live = useLiveInterval();
  const trpc = useTRPC();
  const tenant = useTenantFilter();
  const canOperate = useCanOperate();
  const run = useQuery({ ...trpc.runs.get.queryOptions({ runId, ...tenant.input }), refetchInterval: live(30_000) });
  const runTenant = tenant.tenant ?? run.data?.records[0]?.tenant;
  return (
    <>
      <h1>
        Run <span className="mono">{runId}</span>
      </h1>
      {run.isPending ? <Loading what="the run" /> : null}
      {run.error && !run.data ? (
        httpStatusOf(run.error) === 404 || httpStatusOf(run.error) === 400 ? (
          <NoResults>
            No intent record belongs to a run with the id “{runId}”, and no plan was declared for it.
          </NoResults>
        ) : (
          <ErrorState error={run.error} title="Could not load the run" />
        )
      ) : null}
      {run.data ? (
        <>
          <p className="muted small">
            {run.data.records.length} step{run.data.records.length === 1 ? "" : "s"}
            {run.data.records.length ? ", oldest first" : ""}
            {run.data.truncated ? " (only the first 1000 are shown)" : ""}.
          </p>
          {run.data.plan ? <PlanView plan={run.data.plan} done={run.data.records} /> : null}
          {run.data.abort ? <RunAbortState abort={run.data.abort} records={run.data.records} /> : null}
          {canOperate && run.data.records.length > 0 ? (
            <RunAbort runId={runId} tenant={tenant.selectable ? runTenant : undefined} records={run.data.records} />
          ) : null}
          {run.data.records.length ? (
            <DataTable
              label="Steps"
              data={run.data.records.map((r, i) => ({ ...r, order: i + 1 }))}
              columns={withTenantColumn(columns, tenant.showTenant)}
            />
          ) : (
            <p className="muted" data-testid="run-no-calls">
              No calls yet: the agent has not called a tool in this run.
            </p>
          )}
        </>
      ) : null}
    </>
  );
}
