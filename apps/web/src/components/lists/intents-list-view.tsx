"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { useState } from "react";
import { DataTable } from "~/components/data-table";
import { RangeFields, WindowText } from "~/components/list-range-picker";
import { useLiveInterval } from "~/components/live-refresh";
import { ParamProblems } from "~/components/param-problems";
import { ErrorState, Loading, NoResults } from "~/components/states";
import { useTenantFilter, withTenantColumn } from "~/components/tenant-filter";
import { everyMember } from "~/lib/every-member";
import { parseListWindow } from "~/lib/time-range";
import { TOOL_FILTER_LABEL, TOOL_FILTER_MAX_LENGTH, toolFilter } from "~/lib/tool-filter";
import { COMMON_PARAMS, checkParams, type ParamRule, withoutProblems } from "~/lib/url-params";
import { useTRPC } from "~/trpc/react";
import type { IntentStatus, Resolution, RouterInputs } from "~/trpc/types";
import { intentColumns } from "./intent-columns";

type Filters = NonNullable<Exclude<RouterInputs["intents"]["list"], void>["filters"]>;

/** Every status (the compiler keeps the list equal to the executor's union). */
const STATUSES = everyMember<IntentStatus>({ PENDING: true, SUCCEEDED: true, FAILED_NO_EFFECT: true, UNKNOWN: true });
/** Every resolution, and `human` (any of the three a person gave), as `intents.list` filters by them. */
const RESOLUTIONS = everyMember<Resolution | "human">({
  found: true,
  absent_resent: true,
  human: true,
  human_confirmed_effect: true,
  human_confirmed_no_effect: true,
  human_resent: true,
  needs_human: true,
});

/** The URL parameters of the records page. */
const INTENTS_PARAMS: Record<string, ParamRule> = {
  ...COMMON_PARAMS,
  status: { kind: "oneOf", values: STATUSES },
  resolution: { kind: "oneOf", values: RESOLUTIONS },
};

/**
 * Intent records filtered by the URL (tool — a substring of the name —, status, resolution, from,
 * to); the overview's links land here. Parameters the page cannot use are named, with the rule.
 */
export function IntentsListView({
  params,
  initialNowEpochMs,
}: {
  params: Record<string, string>;
  /** The server's clock when it rendered the page (epoch ms), so the first render matches its HTML. */
  initialNowEpochMs: number;
}) {
  const live = useLiveInterval();
  const trpc = useTRPC();
  const tenant = useTenantFilter();
  const [now] = useState(initialNowEpochMs);
  const problems = checkParams(params, INTENTS_PARAMS);
  const span = parseListWindow(params, now);
  const tool = toolFilter(params.tool);
  const base: Filters = {
    ...(tool ? { tool } : {}),
    ...(STATUSES.includes(params.status as IntentStatus) ? { status: params.status as IntentStatus } : {}),
    ...span,
  };
  const resolution = RESOLUTIONS.includes(params.resolution as Resolution | "human")
    ? (params.resolution as Resolution | "human")
    : undefined;
  // Keyset paging: `?cursor=` from the previous page's `nextCursor` (one query answers every filter).
  const cursor = params.cursor || undefined;
  const result = useQuery({
    ...trpc.intents.list.queryOptions({
      filters: { ...base, ...(resolution ? { resolution } : {}) },
      limit: 200,
      ...(cursor ? { cursor } : {}),
      ...tenant.input,
    }),
    refetchInterval: live(30_000),
  });
  const error = result.error;
  const pending = result.isPending;
  const items = result.data?.items ?? [];
  const nextCursor = result.data?.nextCursor ?? undefined;
  const pageHref = (to: string | undefined) => {
    const query = new URLSearchParams(Object.entries(params).filter(([k]) => k !== "cursor"));
    if (to) query.set("cursor", to);
    const search = query.toString();
    return tenant.href(`/intents${search ? `?${search}` : ""}`);
  };

  return (
    <>
      <h1>Intent records</h1>
      <ParamProblems problems={problems} path="/intents" kept={withoutProblems(params, problems)} />
      <form
        method="get"
        action="/intents"
        className="toolbar"
        key={JSON.stringify(params)}
        aria-label="Filter the records"
      >
        {tenant.tenant !== undefined ? <input type="hidden" name="tenant" value={tenant.tenant} /> : null}
        <RangeFields params={params} window={span} />
        <label className="field">
          <span>{TOOL_FILTER_LABEL}</span>
          <input name="tool" defaultValue={params.tool ?? ""} maxLength={TOOL_FILTER_MAX_LENGTH} />
        </label>
        <label className="field">
          <span>Status</span>
          <select name="status" defaultValue={params.status ?? ""}>
            <option value="">any</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Resolution</span>
          <select name="resolution" defaultValue={resolution ?? ""}>
            <option value="">any</option>
            {RESOLUTIONS.map((r) => (
              <option key={r} value={r}>
                {r === "human" ? "any human resolution" : r}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Apply</button>
        <WindowText window={span} />
      </form>
      {error ? <ErrorState error={error} title="Could not load the records" /> : null}
      {pending ? <Loading what="records" /> : null}
      {!pending && !error && items.length === 0 ? <NoResults>No intent record matches these filters.</NoResults> : null}
      {items.length ? (
        <DataTable label="Intent records" data={items} columns={withTenantColumn(intentColumns, tenant.showTenant)} />
      ) : null}
      {cursor || nextCursor ? (
        <nav aria-label="Pages" className="toolbar">
          {cursor ? <Link href={pageHref(undefined)}>Newest records</Link> : null}
          {nextCursor ? <Link href={pageHref(nextCursor)}>Older records (next 200)</Link> : null}
        </nav>
      ) : null}
    </>
  );
}
