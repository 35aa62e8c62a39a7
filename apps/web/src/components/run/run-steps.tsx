"use client";

import { createColumnHelper } from "@tanstack/react-table";
import { type Columns, DataTable } from "~/components/data-table";
import { StatusBadge } from "~/components/status-badge";
import { TenantLink, withTenantColumn } from "~/components/tenant-filter";
import { Time } from "~/components/time-zone-toggle";
import { formatJson } from "~/lib/format";
import { intentPath } from "~/lib/search";
import { resolutionLabel } from "~/lib/status";
import { runSteps, type Step, stepStateLook, undoneKey } from "~/lib/step-state";
import type { IntentSummary } from "~/trpc/types";
import { StateBadge } from "./state-badge";

type Row = Step<IntentSummary> & { order: number; tenant: string };

/**
 * A record's key as a short link: its first 8 characters shown, the rest read by a screen reader, so the
 * accessible name is the whole key and holds the visible text (axe's label-content-name-mismatch).
 */
function KeyLink({ recordKey }: { recordKey: string }) {
  return (
    <TenantLink href={intentPath(recordKey)} className="mono small nowrap" title={recordKey}>
      {recordKey.slice(0, 8)}
      <span className="visually-hidden">{recordKey.slice(8)}</span>
      <span aria-hidden="true">…</span>
    </TenantLink>
  );
}

/** The step's undo: the compensating (corrective) call's record, or the compensation registered on it. */
function UndoCell({ step }: { step: Step<IntentSummary> }) {
  const comp = step.record.compensation;
  if (!comp && !step.undo) return <span className="muted">–</span>;
  const tool = step.undo?.tool ?? comp?.tool ?? "";
  return (
    <div data-testid="step-undo">
      <span className="small">{comp?.kind === "corrective" ? "corrective" : "compensation"}: </span>
      <span className="nowrap">{tool}</span>
      {step.undo ? (
        <div className="small">
          <StatusBadge status={step.undo.status} /> <KeyLink recordKey={step.undo.key} />
        </div>
      ) : (
        <div className="small muted">{comp && "status" in comp ? `noted ${comp.status}` : "not run"}</div>
      )}
      <details className="small">
        <summary>JSON</summary>
        <pre>{formatJson(step.undo ?? comp)}</pre>
      </details>
    </div>
  );
}

const col = createColumnHelper<Row>();
const columns: Columns<Row> = [
  col.accessor("order", { header: "#", meta: { numeric: true } }),
  col.accessor((r) => r.record.stepId, {
    id: "step",
    header: "Step / tool",
    cell: (c) => {
      const { record } = c.row.original;
      const of = undoneKey(record.stepId);
      return (
        <div>
          <span className="mono">{of === null ? record.stepId : `undo of ${of.slice(0, 8)}…`}</span>
          <div className="small">{record.tool}</div>
        </div>
      );
    },
  }),
  col.accessor("state", {
    header: "What happened",
    cell: (c) => (
      <div>
        <StateBadge look={stepStateLook(c.getValue())} state={c.getValue()} testId="step-state" />
        <div className="small muted" data-testid="step-detail">
          {c.row.original.detail}
        </div>
      </div>
    ),
  }),
  col.accessor((r) => r.record.status, {
    id: "status",
    header: "Status",
    cell: (c) => {
      const { record } = c.row.original;
      const resolution = record.resolution === null && record.needsHuman ? "needs_human" : record.resolution;
      return (
        <div>
          <StatusBadge status={c.getValue()} />
          {resolution ? <div className="small">{resolutionLabel(resolution)}</div> : null}
          {record.error ? <div className="small mono">{record.error.code}</div> : null}
        </div>
      );
    },
  }),
  col.accessor((r) => r.record.key, {
    id: "key",
    header: "Key",
    enableSorting: false,
    cell: (c) => <KeyLink recordKey={c.getValue()} />,
  }),
  col.display({ id: "undo", header: "Compensation", cell: (c) => <UndoCell step={c.row.original} /> }),
  col.accessor((r) => r.record.attempt, { id: "attempt", header: "Attempts", meta: { numeric: true } }),
  col.accessor((r) => r.record.createdAtEpochMs, {
    id: "created",
    header: "Created",
    cell: (c) => <Time className="small" epochMs={c.getValue()} />,
  }),
];

/**
 * A run's steps, oldest first: each with what happened to it (done, no effect, in flight, waiting
 * for a person, compensated …), its record's status, key and its compensation — a compensating or
 * corrective call is shown under the step it undoes, never counted as a step.
 */
export function RunSteps({ records, showTenant }: { records: IntentSummary[]; showTenant: boolean }) {
  const rows: Row[] = runSteps(records).map((s, i) => ({ ...s, order: i + 1, tenant: s.record.tenant }));
  return (
    <DataTable
      label="Steps"
      data={rows}
      columns={withTenantColumn(columns, showTenant)}
      rowProps={(row) => ({
        "data-testid": "step-row",
        "data-step": row.original.record.stepId,
        "data-state": row.original.state,
      })}
    />
  );
}

/** How many steps a run has (its records but the compensating and corrective ones). */
export function stepCount(records: IntentSummary[]): number {
  return runSteps(records).length;
}
