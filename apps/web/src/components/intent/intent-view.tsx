"use client";

import { useMutation, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useLiveInterval } from "~/components/live-refresh";
import { useCanOperate } from "~/components/session-context";
import { ErrorState, Loading, NoResults } from "~/components/states";
import { StatusBadge } from "~/components/status-badge";
import { TenantLink, useTenantFilter } from "~/components/tenant-filter";
import { Time } from "~/components/time-zone-toggle";
import { formatDuration, formatJson } from "~/lib/format";
import { runPath } from "~/lib/search";
import { resolutionLabel } from "~/lib/status";
import { matchOwners } from "~/lib/timeline";
import { buildTraceUrl } from "~/lib/trace-url";
import { httpStatusOf, useTRPC } from "~/trpc/react";
import type { TimelineEvent } from "~/trpc/types";
import { RecordActions } from "./record-actions";
import { MatchOwnerLinks, Timeline } from "./timeline";

function CopyButton({ text }: { text: string }) {
  const [copied, setCopied] = useState<"idle" | "done" | "failed">("idle");
  return (
    <>
      <button
        type="button"
        onClick={() =>
          navigator.clipboard.writeText(text).then(
            () => setCopied("done"),
            () => setCopied("failed"),
          )
        }
      >
        Copy key
      </button>
      <span aria-live="polite" className="small muted">
        {copied === "done" ? " Copied" : copied === "failed" ? " Copy failed: select the key instead" : ""}
      </span>
    </>
  );
}

/** The records the latest ambiguous identity match of a timeline may belong to (its probe event's `owners`). */
function ambiguousOwners(events: TimelineEvent[]) {
  const last = events.findLast((e) => e.type === "probe" && e.data.match === "ambiguous");
  return last ? matchOwners(last.data) : [];
}

/** When a record waiting for a person is looked at again by the sweeper: a time, or "not automatically". */
function Recheck({ recheckAtEpochMs }: { recheckAtEpochMs: number | null }) {
  if (recheckAtEpochMs === null) return <>not automatically: only a person settles it</>;
  return <Time epochMs={recheckAtEpochMs} />;
}

/** One intent record: facts, arguments (secrets masked by the executor), timeline, compensation, probes, trace link. */
export function IntentView({ intentKey, traceUrlTemplate }: { intentKey: string; traceUrlTemplate: string }) {
  const live = useLiveInterval();
  const trpc = useTRPC();
  const canOperate = useCanOperate();
  const tenant = useTenantFilter();
  const valid = /^[0-9a-f]{32}$/.test(intentKey);
  const intent = useQuery({
    ...trpc.intents.get.queryOptions({ key: intentKey }),
    enabled: valid,
    refetchInterval: live(10_000),
  });
  const probe = useMutation(trpc.probe.rerun.mutationOptions());
  const tools = useQuery({ ...trpc.tools.list.queryOptions(), staleTime: 60_000, enabled: valid && canOperate });
  const [announcement, setAnnouncement] = useState("");

  if (!valid) return <NoResults>“{intentKey}” is not an idempotency key (32 hex characters).</NoResults>;
  if (intent.isPending) return <Loading what="the record" />;
  if (intent.error && !intent.data) {
    return httpStatusOf(intent.error) === 404 ? (
      <NoResults>No record has the key {intentKey}.</NoResults>
    ) : (
      <ErrorState error={intent.error} title="Could not load the record" />
    );
  }
  const { record, events } = intent.data;
  const toolInfo = tools.data?.find((t) => t.name === record.tool);
  const hasProbe = Boolean(toolInfo && (toolInfo.hasKeyProbe || toolInfo.hasIdentityProbe));
  const end = record.finishedAtEpochMs ?? record.updatedAtEpochMs;
  const traceUrl = record.traceId
    ? buildTraceUrl(traceUrlTemplate, record.traceId, record.createdAtEpochMs, end)
    : null;

  return (
    <>
      <h1>{record.tool}</h1>
      <section className="panel" aria-label="Record">
        <dl className="facts">
          <dt>Status</dt>
          <dd>
            <StatusBadge status={record.status} testId="status" />
            {record.needsHuman ? <span className="small"> · waiting for a person</span> : null}
          </dd>
          {tenant.selectable ? (
            <>
              <dt>Tenant</dt>
              <dd data-testid="tenant">
                {record.tenant}
                {tenant.tenant !== undefined && tenant.tenant !== record.tenant ? (
                  <span className="small"> (not the tenant selected in the header, {tenant.tenant})</span>
                ) : null}
              </dd>
            </>
          ) : null}
          <dt>Resolution</dt>
          <dd>{resolutionLabel(record.resolution)}</dd>
          <dt>Idempotency key</dt>
          <dd>
            <code data-testid="idempotency-key">{record.key}</code> <CopyButton text={record.key} />
          </dd>
          <dt>Run / step</dt>
          <dd>
            <TenantLink href={runPath(record.runId)}>{record.runId}</TenantLink> / {record.stepId}
          </dd>
          <dt>Attempts</dt>
          <dd>{record.attempt}</dd>
          {record.needsHuman ? (
            <>
              <dt>Re-check at</dt>
              <dd data-testid="recheck">
                <Recheck recheckAtEpochMs={record.recheckAtEpochMs} />
              </dd>
            </>
          ) : (
            <>
              <dt>Deadline</dt>
              <dd>
                <Time epochMs={record.leaseUntilEpochMs} />
              </dd>
            </>
          )}
          <dt>Created / updated</dt>
          <dd>
            <Time epochMs={record.createdAtEpochMs} /> / <Time epochMs={record.updatedAtEpochMs} />
          </dd>
          <dt>Reconcile sweeps</dt>
          <dd>{record.reconcileSweeps}</dd>
          <dt>Version</dt>
          <dd>{record.version}</dd>
          {record.error ? (
            <>
              <dt>Error</dt>
              <dd data-testid="record-error">
                {record.error.code}: {record.error.message}
                {record.error.code === "AMBIGUOUS_IDENTITY_MATCH" ? (
                  <MatchOwnerLinks owners={ambiguousOwners(events)} />
                ) : null}
              </dd>
            </>
          ) : null}
          <dt>Trace</dt>
          <dd>
            {traceUrl ? (
              <a href={traceUrl} target="_blank" rel="noreferrer">
                Open trace
              </a>
            ) : (
              <span className="muted">no trace recorded</span>
            )}
            {record.traceId ? <span className="mono small"> {record.traceId}</span> : null}
          </dd>
        </dl>
      </section>
      <div aria-live="polite">{announcement ? <p className="notice">{announcement}</p> : null}</div>
      {canOperate ? (
        <RecordActions
          recordKey={record.key}
          tool={record.tool}
          tenant={tenant.selectable ? record.tenant : undefined}
          needsHuman={record.needsHuman}
          onDone={(message) => {
            setAnnouncement(message);
            void intent.refetch();
          }}
        />
      ) : null}
      <h2>Arguments</h2>
      <pre>{formatJson(record.args)}</pre>
      {record.hasResult ? (
        <>
          <h2>Result</h2>
          <pre>{formatJson(record.result)}</pre>
        </>
      ) : null}
      <h2>Compensation</h2>
      {record.compensation ? <pre>{formatJson(record.compensation)}</pre> : <p className="muted">None registered.</p>}
      {canOperate && hasProbe ? (
        <section className="panel" aria-label="Probes">
          <button type="button" onClick={() => probe.mutate({ key: record.key })} disabled={probe.isPending}>
            Re-run probe now
          </button>{" "}
          <span className="small muted">
            Asks the remote now; settles nothing (evidence that contradicts a settled record reopens it for a person).
          </span>
          {probe.isPending ? <p className="loading">Probing…</p> : null}
          {probe.error ? <ErrorState error={probe.error} title="The probe could not run" /> : null}
          {probe.data ? (
            <div aria-live="polite">
              <p>
                <strong>{probe.data.summary}</strong>
              </p>
              <ul>
                {probe.data.probes.map((p) => (
                  <li key={p.probe}>
                    {p.probe} probe: <strong>{p.answer}</strong> in {formatDuration(p.durationMs)}
                    {p.absenceCounts ? "" : " (after key retention: “absent” proves nothing)"}
                    {p.message ? ` — ${p.message}` : ""}
                    {p.found !== undefined ? <pre>{formatJson(p.found)}</pre> : null}
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
        </section>
      ) : null}
      <h2 id="timeline-heading">Timeline</h2>
      <Timeline events={events} />
    </>
  );
}
