"use client";

import { useInfiniteQuery } from "@tanstack/react-query";
import { createColumnHelper } from "@tanstack/react-table";
import { useRouter } from "next/navigation";
import type { FormEvent } from "react";
import { type Columns, DataTable } from "~/components/data-table";
import { useLiveInterval } from "~/components/live-refresh";
import { ParamProblems } from "~/components/param-problems";
import { EmptyState, ErrorState, Loading, NoResults } from "~/components/states";
import { TenantLink, useTenantFilter, withTenantColumn } from "~/components/tenant-filter";
import { Time, useDisplayZone } from "~/components/time-zone-toggle";
import { ZonedTimeField } from "~/components/zoned-time-field";
import { operatorAbortSummary } from "~/lib/abort-summary";
import { fromDateTimeInput } from "~/lib/format";
import { intentPath, runPath } from "~/lib/search";
import { actionLabel, OPERATOR_ACTIONS } from "~/lib/status";
import { TOOL_FILTER_LABEL, TOOL_FILTER_MAX_LENGTH, toolFilter } from "~/lib/tool-filter";
import { COMMON_PARAMS, checkParams, type ParamRule, withoutProblems } from "~/lib/url-params";
import { useTRPC, useTRPCClient } from "~/trpc/react";
import type { AuditEntry, OperatorAction } from "~/trpc/types";

/** An operator's run abort (`runs.operatorAbort`) in the audit. */
type RunAbortEntry = Extract<AuditEntry, { action: "abort_run" }>;
/** An action of the audit's filter: one on a record, or a run abort. */
type AuditAction = OperatorAction | "abort_run";
const AUDIT_ACTIONS: readonly AuditAction[] = [...OPERATOR_ACTIONS, "abort_run"];

function isRunAbort(entry: AuditEntry): entry is RunAbortEntry {
  return entry.action === "abort_run";
}

function auditActionLabel(action: AuditAction): string {
  return action === "abort_run" ? "Abort run" : actionLabel(action);
}

const col = createColumnHelper<AuditEntry>();
const columns: Columns<AuditEntry> = [
  col.accessor("atEpochMs", { header: "When", cell: (c) => <Time epochMs={c.getValue()} /> }),
  col.accessor("actorName", { header: "Operator" }),
  col.accessor("action", { header: "Action", cell: (c) => auditActionLabel(c.getValue()) }),
  col.accessor("tool", { header: "Tool", cell: (c) => c.getValue() || "–" }),
  col.accessor("key", {
    header: "Record or run",
    cell: (c) => {
      const entry = c.row.original;
      return isRunAbort(entry) ? (
        <TenantLink href={runPath(entry.runId)} className="mono small">
          run {entry.runId}
        </TenantLink>
      ) : (
        <TenantLink href={intentPath(entry.key)} className="mono small">
          {entry.key}
        </TenantLink>
      );
    },
  }),
  col.accessor(
    (e) =>
      isRunAbort(e)
        ? `${e.report.complete ? "aborted" : "aborted, not complete"}${e.report.needsHuman ? ` (${e.report.needsHuman} for a person)` : ""}: ${operatorAbortSummary(e.report)}`
        : `${e.before.status} → ${e.after.status}`,
    { id: "change", header: "Change" },
  ),
  col.accessor("note", { header: "Reason" }),
];

/** The URL parameters of the audit page. */
const AUDIT_PARAMS: Record<string, ParamRule> = {
  tenant: COMMON_PARAMS.tenant,
  tool: COMMON_PARAMS.tool,
  from: COMMON_PARAMS.from,
  to: COMMON_PARAMS.to,
  operator: { kind: "text", maxLength: 200 },
  action: { kind: "oneOf", values: AUDIT_ACTIONS },
};

function epochMs(value: string | undefined): number | undefined {
  return value && /^\d{1,16}$/.test(value) ? Number(value) : undefined;
}

/**
 * Every operator action (on records, and run aborts), newest first; filters (operator, action, tool,
 * time) live in the URL.
 */
export function AuditView({ params }: { params: Record<string, string> }) {
  const live = useLiveInterval();
  const trpc = useTRPC();
  const client = useTRPCClient();
  const router = useRouter();
  const tenant = useTenantFilter();
  const zone = useDisplayZone();
  const problems = checkParams(params, AUDIT_PARAMS);
  const action = AUDIT_ACTIONS.includes(params.action as AuditAction) ? (params.action as AuditAction) : undefined;
  const tool = toolFilter(params.tool);
  const from = epochMs(params.from);
  const to = epochMs(params.to);
  const filters = {
    ...(params.operator ? { operator: params.operator } : {}),
    ...(action ? { action } : {}),
    ...(tool ? { tool } : {}),
    ...(from !== undefined ? { fromEpochMs: from } : {}),
    ...(to !== undefined && (from === undefined || to > from) ? { toEpochMs: to } : {}),
  };
  const query = { ...filters, ...tenant.input };
  const filtered = Object.keys(filters).length > 0;
  // audit.list's input is strict (no `direction`), so the pages are fetched with the plain client.
  const audit = useInfiniteQuery({
    queryKey: [...trpc.audit.list.queryKey(query), "pages"],
    queryFn: ({ pageParam }) =>
      client.audit.list.query({ ...query, limit: 50, ...(pageParam ? { cursor: pageParam } : {}) }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (page) => page.nextCursor ?? undefined,
    refetchInterval: live(30_000),
  });
  const entries = audit.data?.pages.flatMap((p) => p.entries) ?? [];

  function apply(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const next = new URLSearchParams();
    for (const name of ["operator", "action", "tool"]) {
      const value = String(form.get(name) ?? "").trim();
      if (value) next.set(name, value);
    }
    for (const name of ["from", "to"]) {
      const value = String(form.get(name) ?? "");
      const ms = fromDateTimeInput(value, zone);
      if (Number.isFinite(ms)) next.set(name, String(ms));
    }
    router.push(tenant.href(`/audit${next.size ? `?${next}` : ""}`));
  }

  return (
    <>
      <h1>Audit log</h1>
      <ParamProblems problems={problems} path="/audit" kept={withoutProblems(params, problems)} />
      <form className="toolbar" onSubmit={apply} key={`${zone}${JSON.stringify(params)}`}>
        <label className="field">
          <span>Operator</span>
          <input name="operator" defaultValue={params.operator ?? ""} />
        </label>
        <label className="field">
          <span>Action</span>
          <select name="action" defaultValue={action ?? ""}>
            <option value="">any</option>
            {AUDIT_ACTIONS.map((a) => (
              <option key={a} value={a}>
                {auditActionLabel(a)}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>{TOOL_FILTER_LABEL}</span>
          <input name="tool" defaultValue={params.tool ?? ""} maxLength={TOOL_FILTER_MAX_LENGTH} />
        </label>
        <ZonedTimeField label="From" name="from" epochMs={from} zone={zone} />
        <ZonedTimeField label="To" name="to" epochMs={to} zone={zone} />
        <button type="submit">Filter</button>
      </form>
      {audit.error ? <ErrorState error={audit.error} title="Could not load the audit log" /> : null}
      {audit.isPending ? <Loading what="the audit log" /> : null}
      {audit.data && entries.length === 0 ? (
        filtered ? (
          <NoResults>No operator action matches these filters.</NoResults>
        ) : (
          <EmptyState>No operator has acted on a record or aborted a run yet.</EmptyState>
        )
      ) : null}
      {entries.length ? (
        <DataTable
          label="Audit log"
          data={entries}
          columns={withTenantColumn(columns, tenant.showTenant)}
          rowProps={() => ({ "data-testid": "audit-row" })}
        />
      ) : null}
      {audit.hasNextPage ? (
        <div className="pager">
          <button type="button" onClick={() => audit.fetchNextPage()} disabled={audit.isFetchingNextPage}>
            Load older entries
          </button>
        </div>
      ) : null}
    </>
  );
}
