"use client";

import { useQuery } from "@tanstack/react-query";
import { useLiveInterval } from "~/components/live-refresh";
import { RunSteps, stepCount } from "~/components/run/run-steps";
import { StateBadge } from "~/components/run/state-badge";
import { useCanOperate } from "~/components/session-context";
import { ErrorState, Loading, NoResults } from "~/components/states";
import { useTenantFilter } from "~/components/tenant-filter";
import { Time } from "~/components/time-zone-toggle";
import { runState, runStateLook } from "~/lib/run-state";
import { runSteps, stepStateLook } from "~/lib/step-state";
import { httpStatusOf, useTRPC } from "~/trpc/react";
import type { IntentSummary, RouterOutputs } from "~/trpc/types";
import { RunAbort } from "./run-abort";
import { RunAbortState } from "./run-abort-state";

type RunPlan = NonNullable<RouterOutputs["runs"]["get"]["plan"]>;

/** The run's declared plan: each planned step and what happened to it (or that it was not called yet). */
function PlanView({ plan, records }: { plan: RunPlan; records: IntentSummary[] }) {
  const steps = runSteps(records);
  return (
    <section aria-label="Declared plan" data-testid="run-plan">
      <h2>Declared plan</h2>
      <p className="muted small">
        Declared <Time epochMs={plan.declaredAtEpochMs} />
        {records.length === 0 ? "; the agent has made no call of this run yet." : "."}
      </p>
      <ol>
        {plan.steps.map((planned) => {
          const step = steps.find((s) => s.record.stepId === planned.stepId && s.record.tool === planned.tool);
          return (
            <li key={planned.stepId} data-testid="plan-step">
              <span className="mono">{planned.stepId}</span> · {planned.tool} ·{" "}
              {step ? (
                <StateBadge look={stepStateLook(step.state)} state={step.state} title={step.detail} />
              ) : (
                "not done yet"
              )}
            </li>
          );
        })}
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
  const state = run.data ? runState(run.data) : null;
  const look = state ? runStateLook(state) : null;
  const steps = run.data ? stepCount(run.data.records) : 0;
  return (
    <>
      <h1>
        Run <span className="mono">{runId}</span>
      </h1>
      {state && look ? (
        <p data-testid="run-state-line">
          <StateBadge look={look} state={state} testId="run-state" large />{" "}
          <span className="small muted">{look.meaning}</span>
        </p>
      ) : null}
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
          <p className="muted small" data-testid="run-step-count">
            {steps} step{steps === 1 ? "" : "s"}
            {steps ? ", oldest first" : ""}
            {steps < run.data.records.length ? "; compensations under the step they undo" : ""}
            {run.data.truncated ? " (only the first 1000 records are shown)" : ""}.
          </p>
          {run.data.plan ? <PlanView plan={run.data.plan} records={run.data.records} /> : null}
          {run.data.abort ? <RunAbortState abort={run.data.abort} records={run.data.records} /> : null}
          {canOperate && run.data.records.length > 0 ? (
            <RunAbort runId={runId} tenant={tenant.selectable ? runTenant : undefined} records={run.data.records} />
          ) : null}
          {run.data.records.length ? (
            <RunSteps records={run.data.records} showTenant={tenant.showTenant} />
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
