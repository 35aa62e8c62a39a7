"use client";

import { createColumnHelper } from "@tanstack/react-table";
import type { Columns } from "~/components/data-table";
import { StatusBadge } from "~/components/status-badge";
import { TenantLink } from "~/components/tenant-filter";
import { Time } from "~/components/time-zone-toggle";
import { intentPath, runPath } from "~/lib/search";
import { resolutionLabel } from "~/lib/status";
import type { IntentSummary } from "~/trpc/types";

const col = createColumnHelper<IntentSummary>();

/** Columns shared by the lists of intent records. */
export const intentColumns: Columns<IntentSummary> = [
  col.accessor("status", { header: "Status", cell: (c) => <StatusBadge status={c.getValue()} /> }),
  col.accessor("tool", { header: "Tool" }),
  col.accessor("key", {
    header: "Key",
    cell: (c) => (
      <TenantLink href={intentPath(c.getValue())} className="mono small">
        {c.getValue()}
      </TenantLink>
    ),
  }),
  col.accessor("runId", {
    header: "Run / step",
    cell: (c) => (
      <span className="small">
        <TenantLink href={runPath(c.getValue())}>{c.getValue()}</TenantLink> /{" "}
        <span className="nowrap">{c.row.original.stepId}</span>
      </span>
    ),
  }),
  col.accessor("resolution", {
    header: "Resolution",
    // A confirmed effect an abort could not undo keeps its resolution (none) but waits for a person.
    cell: (c) =>
      c.getValue() === null && c.row.original.needsHuman
        ? resolutionLabel("needs_human")
        : resolutionLabel(c.getValue()),
  }),
  col.accessor("attempt", { header: "Attempts", meta: { numeric: true } }),
  col.accessor("createdAtEpochMs", {
    header: "Created",
    cell: (c) => <Time className="nowrap" epochMs={c.getValue()} />,
  }),
];
