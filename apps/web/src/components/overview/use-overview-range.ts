"use client";

import { useQuery } from "@tanstack/react-query";
import { useTenantFilter } from "~/components/tenant-filter";
import { fitPreset, parseTimeRange, type TimeRange, urlNamesRange } from "~/lib/time-range";
import { useTRPC } from "~/trpc/react";

/** The overview's window and whether it is settled (false while the default still waits for `stats.oldest`). */
export interface OverviewRange {
  range: TimeRange;
  ready: boolean;
}

/**
 * The overview's window: the URL's (`range`, or `from`/`to`) when it names one — that always wins;
 * else one fitted to the data (`stats.oldest`, the tenant filter's): the smallest of 15 min / 1 h /
 * 6 h / 24 h that holds the oldest record, so a young database opens on the last 15 minutes. If the
 * oldest record cannot be read, the default 24 hours.
 */
export function useOverviewRange(params: Record<string, string>, nowEpochMs: number): OverviewRange {
  const trpc = useTRPC();
  const tenant = useTenantFilter();
  const get = (name: string) => params[name] ?? null;
  const explicit = urlNamesRange({ get });
  const oldest = useQuery({
    ...trpc.stats.oldest.queryOptions(tenant.input),
    enabled: !explicit,
    staleTime: 60_000,
  });
  if (explicit) return { range: parseTimeRange({ get }, nowEpochMs), ready: true };
  if (oldest.data) {
    const fitted = fitPreset(oldest.data.oldestCreatedAtEpochMs, nowEpochMs);
    return { range: parseTimeRange({ get }, nowEpochMs, fitted), ready: true };
  }
  return { range: parseTimeRange({ get }, nowEpochMs), ready: oldest.isError };
}
