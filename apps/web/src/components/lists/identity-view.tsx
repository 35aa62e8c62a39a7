"use client";

import { useQuery } from "@tanstack/react-query";
import { createColumnHelper } from "@tanstack/react-table";
import Link from "next/link";
import { type Columns, DataTable } from "~/components/data-table";
import { useLiveInterval } from "~/components/live-refresh";
import { ParamProblems } from "~/components/param-problems";
import { EmptyState, ErrorState, Loading, NoResults } from "~/components/states";
import { TenantLink, useTenantFilter, withTenantColumn } from "~/components/tenant-filter";
import { IDENTITY_VALUE_MAX_LENGTH, identityPath, runPath } from "~/lib/search";
import { TOOL_FILTER_LABEL, TOOL_FILTER_MAX_LENGTH, toolFilter } from "~/lib/tool-filter";
import { COMMON_PARAMS, checkParams, type ParamRule, withoutProblems } from "~/lib/url-params";
import { httpStatusOf, useTRPC } from "~/trpc/react";
import type { RouterOutputs } from "~/trpc/types";
import { intentColumns } from "./intent-columns";

type IdentityItem = RouterOutputs["intents"]["byIdentity"]["items"][number];
const col = createColumnHelper<IdentityItem>();

/** The page size (the executor allows 1–100). */
const PAGE_SIZE = 50;

const columns: Columns<IdentityItem> = [
  col.accessor("matchedFields", {
    header: "Matched field",
    cell: (c) => (
      <span className="small">
        {c.getValue().map((field: string) => (
          <span key={field} className="nowrap">
            <span className="mono">{field}</span> = <span className="mono">{c.row.original.identity[field]}</span>{" "}
          </span>
        ))}
        {c.row.original.archived ? <span className="muted">(archived)</span> : null}
      </span>
    ),
  }),
  ...(intentColumns as Columns<IdentityItem>),
];

/** The URL parameters of the identity page. */
const IDENTITY_PARAMS: Record<string, ParamRule> = {
  tenant: COMMON_PARAMS.tenant,
  cursor: COMMON_PARAMS.cursor,
  tool: COMMON_PARAMS.tool,
  value: { kind: "text", maxLength: IDENTITY_VALUE_MAX_LENGTH },
  /** What was typed in the search box when `value` is the form of it that matched (e.g. `#W5199551`). */
  asked: { kind: "text", maxLength: IDENTITY_VALUE_MAX_LENGTH },
};

/** Links the run whose id is the value, when it exists ("show both"). */
function RunWithThisId({ value }: { value: string }) {
  const trpc = useTRPC();
  const tenant = useTenantFilter();
  const run = useQuery({ ...trpc.runs.get.queryOptions({ runId: value, ...tenant.input }), retry: false });
  if (!run.data) return null;
  return (
    <p data-testid="identity-run-link">
      A run has this id too: <TenantLink href={runPath(value)}>run {value}</TenantLink>
    </p>
  );
}

/**
 * The records (live and archived) whose business identity holds `?value=` — "what happened to order
 * A-1182?" — newest first, with the identity field that matched, 50 a page (`intents.byIdentity`).
 */
export function IdentityView({ params }: { params: Record<string, string> }) {
  const live = useLiveInterval();
  const trpc = useTRPC();
  const tenant = useTenantFilter();
  const problems = checkParams(params, IDENTITY_PARAMS);
  const value = (params.value ?? "").trim().slice(0, IDENTITY_VALUE_MAX_LENGTH);
  const tool = toolFilter(params.tool);
  const cursor = params.cursor || undefined;
  const result = useQuery({
    ...trpc.intents.byIdentity.queryOptions({
      value,
      limit: PAGE_SIZE,
      ...(tool ? { tool } : {}),
      ...(cursor ? { cursor } : {}),
      ...tenant.input,
    }),
    enabled: value !== "",
    refetchInterval: live(30_000),
  });
  const items = result.data?.items ?? [];
  const nextCursor = result.data?.nextCursor ?? undefined;
  const pageHref = (to: string | undefined) => {
    const href = identityPath(value, to, params.asked);
    return tenant.href(tool ? `${href}&tool=${encodeURIComponent(tool)}` : href);
  };
  const forms = result.data?.forms.filter((f) => f !== value) ?? [];
  return (
    <>
      <h1>Records whose identity holds “{value}”</h1>
      <ParamProblems problems={problems} path="/identity" kept={withoutProblems(params, problems)} />
      {params.asked && params.asked.trim() !== value ? (
        <p className="notice" data-testid="search-matched">
          No record holds “{params.asked.trim()}” as typed; these hold “{value}”.
        </p>
      ) : null}
      <p className="muted small">
        Every record (archived ones too) with an identity field equal to the value — the fields each tool declares, such
        as an order id. Matched as typed{forms.length ? `, and as ${forms.slice(0, 3).join(", ")}` : ""}
        {forms.length > 3 ? "…" : ""}; never a part of a value.
      </p>
      <form className="toolbar" method="get" action="/identity">
        <input type="hidden" name="value" value={value} />
        {tenant.tenant !== undefined ? <input type="hidden" name="tenant" value={tenant.tenant} /> : null}
        <label className="field">
          <span>{TOOL_FILTER_LABEL}</span>
          <input name="tool" defaultValue={params.tool ?? ""} maxLength={TOOL_FILTER_MAX_LENGTH} />
        </label>
        <button type="submit">Filter</button>
      </form>
      {value ? <RunWithThisId value={value} /> : null}
      {value === "" ? <EmptyState>Type an order id or another identity value in Search at the top.</EmptyState> : null}
      {result.error ? (
        <ErrorState
          error={result.error}
          title={httpStatusOf(result.error) === 400 ? "Cannot search this value" : "Could not search the records"}
        />
      ) : null}
      {value && result.isPending ? <Loading what="records" /> : null}
      {value && result.isSuccess && items.length === 0 ? (
        <NoResults>No record’s identity holds “{value}”.</NoResults>
      ) : null}
      {items.length ? (
        <DataTable label="Records by identity" data={items} columns={withTenantColumn(columns, tenant.showTenant)} />
      ) : null}
      {cursor || nextCursor ? (
        <nav aria-label="Pages" className="toolbar">
          {cursor ? <Link href={pageHref(undefined)}>Newest records</Link> : null}
          {nextCursor ? <Link href={pageHref(nextCursor)}>Older records (next {PAGE_SIZE})</Link> : null}
        </nav>
      ) : null}
    </>
  );
}
