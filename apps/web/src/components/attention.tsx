"use client";

import { useQuery } from "@tanstack/react-query";
import { useLiveInterval } from "~/components/live-refresh";
import { TenantLink, useTenantFilter } from "~/components/tenant-filter";
import { countOf, formatDuration } from "~/lib/format";
import { useTRPC } from "~/trpc/react";

/** The attention counts refresh every 10 s (paused with the header's Pause). */
const ATTENTION_REFETCH_MS = 10_000;

/**
 * `stats.attention` for the tenant chosen in the header, refreshed with live refresh: the human
 * queue's size and oldest age, and the stale PENDING records. One query shared by the overview's strip
 * and the Human queue tab's count (same input, one request).
 */
export function useAttention() {
  const trpc = useTRPC();
  const live = useLiveInterval();
  const tenant = useTenantFilter();
  return useQuery({
    ...trpc.stats.attention.queryOptions(tenant.input),
    refetchInterval: live(ATTENTION_REFETCH_MS),
    placeholderData: (previous) => previous,
  });
}

/** The Human queue tab's count: records waiting for a person now (nothing while none waits or unknown). */
export function QueueCount() {
  const count = useAttention().data?.needsHuman.count;
  if (!count) return null;
  return (
    <span className="tab-count" data-testid="queue-count" title={`${countOf(count, "record")} waiting for a person`}>
      <span className="visually-hidden"> (</span>
      {count}
      <span className="visually-hidden"> waiting)</span>
    </span>
  );
}

/**
 * "Needs attention" on the overview: records waiting for a person (and the oldest one's age), stale
 * PENDING records (and how long past its deadline the oldest is), compensations that failed among the
 * window's calls — each a link to the page that lists them. Says so when nothing waits.
 */
export function AttentionStrip({
  compensationsFailed,
  compensationsHref,
}: {
  /** Failed compensations of the window's records (`stats.overview` totals), or undefined while loading. */
  compensationsFailed: number | undefined;
  /** Where the failed compensations are shown (the overview sorted by them). */
  compensationsHref: string;
}) {
  const attention = useAttention();
  const a = attention.data;
  if (!a) return null;
  const items = [
    a.needsHuman.count > 0 ? (
      <li key="human" data-testid="attention-human" className="attention-item">
        <TenantLink href="/queue">
          <strong>{countOf(a.needsHuman.count, "record")}</strong> waiting for a person
        </TenantLink>{" "}
        <span className="small" data-testid="attention-human-age">
          · oldest {formatDuration(a.needsHuman.oldestAgeMs)} old
        </span>
      </li>
    ) : null,
    a.stalePending.count > 0 ? (
      <li key="stale" data-testid="attention-stale" className="attention-item">
        <TenantLink href="/stale">
          <strong>{a.stalePending.count}</strong> stale PENDING
        </TenantLink>{" "}
        <span className="small">
          · oldest {formatDuration(a.stalePending.oldestAgePastDeadlineMs)} past its deadline
        </span>
      </li>
    ) : null,
    compensationsFailed ? (
      <li key="compensations" data-testid="attention-compensations" className="attention-item">
        <TenantLink href={compensationsHref}>
          <strong>{countOf(compensationsFailed, "compensation")}</strong> failed
        </TenantLink>{" "}
        <span className="small">· among this window's calls</span>
      </li>
    ) : null,
  ].filter(Boolean);
  return (
    <section aria-label="Needs attention" className="attention" data-testid="attention">
      <strong className="attention-title">Needs attention</strong>
      {items.length ? (
        <ul className="attention-list">{items}</ul>
      ) : (
        <span className="muted small" data-testid="attention-none">
          Nothing waits: no record for a person, no stale PENDING
          {compensationsFailed === 0 ? ", no failed compensation in this window" : ""}.
        </span>
      )}
    </section>
  );
}
