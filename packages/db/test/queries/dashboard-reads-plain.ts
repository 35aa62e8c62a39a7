/**
 * Plain reference queries over the raw tables for the dashboard-reads test: the overview's figures as
 * the original definitions state them (no rollups, no flags: "ever UNKNOWN" from the timeline), and
 * the lists by OFFSET-free full sorts.
 */
import type pg from "pg";

/** Counts of one tool in one slice (−1: the previous period), by the original definitions. */
export interface PlainCount {
  tool: string;
  slice: number;
  calls: number;
  unknown: number;
  categories: Record<string, number>;
}

/** Epoch-ms bounds of the overview window and its slices, as `statsOverview` cuts them. */
export interface PlainWindow {
  fromEpochMs: number;
  toEpochMs: number;
  buckets: number;
}

/** One record as the plain definitions see it (hot or archived). */
export interface PlainFact {
  tenant: string;
  tool: string;
  createdMs: number;
  /** Ever UNKNOWN by the timeline (an UNKNOWN outcome, an expired lease), the status or a resolution. */
  ever: boolean;
  category: string;
  /** Durations of its sends, ms. */
  durations: number[];
}

/** Every record (hot and archived) with the plain definitions' facts: one pass over the raw tables. */
export async function loadPlainFacts(client: pg.Client): Promise<PlainFact[]> {
  const { rows } = await client.query<{
    tenant: string;
    tool: string;
    ms: string;
    ever: boolean;
    category: string;
    d: number[] | null;
  }>(
    `SELECT r.tenant, r.tool, (extract(epoch FROM r.created_at) * 1000)::bigint::text AS ms,
       (r.status = 'UNKNOWN' OR r.resolution IS NOT NULL OR coalesce(bool_or(e.type = 'lease_expired'
         OR (e.type = 'outcome' AND e.data->>'outcome' = 'UNKNOWN')), false)) AS ever,
       CASE WHEN r.status IN ('PENDING', 'UNKNOWN') OR r.needs_human THEN 'open'
         WHEN r.resolution IS NOT NULL THEN r.resolution::text ELSE 'other' END AS category,
       array_agg((e.data->>'durationMs')::float8) FILTER (WHERE e.type = 'outcome'
         AND jsonb_typeof(e.data->'durationMs') = 'number') AS d
     FROM (SELECT tenant, key, tool, created_at, status, resolution, needs_human FROM intent_records UNION ALL
           SELECT tenant, key, tool, created_at, status, resolution, needs_human FROM intent_records_archive) r
     LEFT JOIN (SELECT tenant, key, type, data FROM intent_events UNION ALL
           SELECT tenant, key, type, data FROM intent_events_archive) e ON e.tenant = r.tenant AND e.key = r.key
     GROUP BY r.tenant, r.key, r.tool, r.created_at, r.status, r.resolution, r.needs_human`,
  );
  return rows.map((r) => ({
    tenant: r.tenant,
    tool: r.tool,
    createdMs: Number(r.ms),
    ever: r.ever,
    category: r.category,
    durations: r.d ?? [],
  }));
}

/** Per (tool, slice) counts: calls, ever-UNKNOWN, categories of the ever-UNKNOWN; slices as `statsOverview` cuts them. */
export function plainCounts(facts: PlainFact[], tenants: string[], w: PlainWindow): PlainCount[] {
  const windowMs = w.toEpochMs - w.fromEpochMs;
  const prevFrom = Math.max(0, w.fromEpochMs - windowMs);
  const out = new Map<string, PlainCount>();
  for (const f of facts) {
    if (!tenants.includes(f.tenant) || f.createdMs < prevFrom || f.createdMs >= w.toEpochMs) continue;
    const slice =
      f.createdMs < w.fromEpochMs
        ? -1
        : Math.min(w.buckets - 1, Math.floor(((f.createdMs - w.fromEpochMs) * w.buckets) / windowMs));
    const id = `${f.tool}/${slice}`;
    const c = out.get(id) ?? { tool: f.tool, slice, calls: 0, unknown: 0, categories: {} };
    out.set(id, c);
    c.calls += 1;
    if (f.ever) {
      c.unknown += 1;
      c.categories[f.category] = (c.categories[f.category] ?? 0) + 1;
    }
  }
  return [...out.values()];
}

/** Per tool: the sorted send durations (ms) of the window's records. */
export function plainDurations(
  facts: PlainFact[],
  tenants: string[],
  fromEpochMs: number,
  toEpochMs: number,
): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const f of facts) {
    if (!tenants.includes(f.tenant) || f.createdMs < fromEpochMs || f.createdMs >= toEpochMs) continue;
    const list = out.get(f.tool) ?? [];
    out.set(f.tool, list);
    list.push(...f.durations);
  }
  for (const list of out.values()) list.sort((a, b) => a - b);
  return out;
}

/** Nearest-rank percentile of sorted samples. */
export function nearestRank(sorted: number[], q: number): number {
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;
}

/** Keys of the records matching a SQL condition on `r`, newest first (created_at, key descending). */
export async function plainKeys(client: pg.Client, condition: string, values: unknown[], limit: number) {
  const { rows } = await client.query<{ key: string; ms: string }>(
    `SELECT key, (extract(epoch FROM created_at) * 1000)::bigint::text AS ms FROM intent_records r WHERE ${condition}
     ORDER BY created_at DESC, key DESC LIMIT ${limit}`,
    values,
  );
  return rows.map((r) => ({ key: r.key, createdAtEpochMs: Number(r.ms) }));
}

/**
 * Compensations per tool of the records (hot and archived) of `tenants` created in [fromMs, toMs): run
 * (`compensation.key` set) and failed (the record it names, hot or archived, is missing, ended
 * FAILED_NO_EFFECT or waits for a person), by a plain join.
 */
export async function plainCompensations(
  client: pg.Client,
  tenants: string[],
  fromMs: number,
  toMs: number,
): Promise<Map<string, { run: number; failed: number }>> {
  const { rows } = await client.query<{ tool: string; run: number; failed: number }>(
    `SELECT r.tool, count(*)::int AS run,
       count(*) FILTER (WHERE c.key IS NULL OR c.status = 'FAILED_NO_EFFECT' OR c.needs_human)::int AS failed
     FROM (SELECT tenant, tool, created_at, compensation FROM intent_records UNION ALL
           SELECT tenant, tool, created_at, compensation FROM intent_records_archive) r
     LEFT JOIN (SELECT tenant, key, status, needs_human FROM intent_records UNION ALL
           SELECT tenant, key, status, needs_human FROM intent_records_archive) c
       ON c.tenant = r.tenant AND c.key = r.compensation->>'key'
     WHERE r.tenant = ANY($1) AND r.compensation ? 'key' AND r.created_at >= $2 AND r.created_at < $3
     GROUP BY r.tool`,
    [tenants, new Date(fromMs), new Date(toMs)],
  );
  return new Map(rows.map((r) => [r.tool, { run: r.run, failed: r.failed }]));
}
