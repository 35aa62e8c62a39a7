/**
 * Fills a migrated database with a realistic intent log by SQL (`generate_series`, no round trip per
 * row): used by `pnpm bench:dashboard` and the dashboard reads' correctness test.
 */
import pg from "pg";

/** What {@link fillIntentLog} writes. */
export interface FillOptions {
  /** Intent records to write. */
  records: number;
  /** The records' tenants (spread round-robin). @default ["default"] */
  tenants?: string[];
  /** Tools (`tool_00` …). @default 30 */
  tools?: number;
  /** Records are spread evenly over this many days before `endEpochMs`. @default 30 */
  days?: number;
  /** Creation time of the newest record, epoch ms. @default now − 5 minutes */
  endEpochMs?: number;
  /** Records written per statement (progress is reported between them). @default 500_000 */
  chunk?: number;
  /** Called after each chunk with the records written so far. */
  onProgress?: (written: number) => void;
}

/**
 * The mix, by a hash of the record number h ∈ [0, 1000): 93 % SUCCEEDED (h < 930), 5 % FAILED_NO_EFFECT,
 * 1.5 % UNKNOWN then resolved (found ×2, absent_resent, human_confirmed_effect,
 * human_confirmed_no_effect by record number mod 5), 0.3 % waiting for a human (UNKNOWN, needs_human),
 * 0.2 % stale PENDING (deadline 30 s after creation). 0.1 % of the SUCCEEDED ran a compensation (its
 * `compensation.key` names a record that does not exist: counted as failed). Events: created, sent,
 * and an outcome with `durationMs` (tool-dependent, 0.3–2.3 × a base of 20 + 10 × tool number ms);
 * UNKNOWNs add a probe (resolved) or needs_human; stale PENDING has created and sent only.
 */
const RECORDS_SQL = `
WITH g AS (
  SELECT i, abs(hashint8(i)) % 1000 AS h, i % $4::int AS tool_no,
    $5::timestamptz - (($1::bigint - i) * $6::float8) * interval '1 millisecond' AS created_at,
    (20 + 10 * (i % $4::int)) * (0.3 + (abs(hashint8(i + 7)) % 65536) / 65536.0 * 2) AS duration_ms,
    ($7::text[])[1 + i % array_length($7::text[], 1)] AS tenant
  FROM generate_series($2::bigint, $3::bigint) AS i
), s AS (
  SELECT g.*,
    CASE WHEN h < 930 THEN 'SUCCEEDED' WHEN h < 980 THEN 'FAILED_NO_EFFECT'
      WHEN h < 995 THEN (CASE WHEN i % 5 = 4 THEN 'FAILED_NO_EFFECT' ELSE 'SUCCEEDED' END)
      WHEN h < 998 THEN 'UNKNOWN' ELSE 'PENDING' END AS status,
    CASE WHEN h >= 980 AND h < 995 THEN (ARRAY['found', 'found', 'absent_resent', 'human_confirmed_effect',
      'human_confirmed_no_effect'])[1 + i % 5] END AS resolution
  FROM g
), ins AS (
INSERT INTO intent_records (tenant, key, run_id, step_id, tool, args, identity, status, attempt, lease_until_at, recheck_at,
  result, error, compensation, resolution, needs_human, reconcile_sweeps, version, created_at, updated_at,
  finished_at, trace_id, ever_unknown)
SELECT tenant, md5(tenant || ':' || i), 'run-' || (i / 5), 'step-' || (i % 5), 'tool_' || lpad(tool_no::text, 2, '0'),
  jsonb_build_object('order_id', 'A-' || i, 'amount', '10.00'), jsonb_build_object('order_id', 'A-' || i),
  status::"IntentStatus", 1,
  created_at + interval '30 seconds',
  -- PENDING: due when its lease ends; the UNKNOWNs wait for a person only (no re-check)
  CASE WHEN status = 'PENDING' THEN created_at + interval '30 seconds' END,
  CASE WHEN status = 'SUCCEEDED' THEN '{"ok": true}'::jsonb END,
  CASE WHEN status = 'FAILED_NO_EFFECT' THEN '{"code": "REJECTED", "message": "declined"}'::jsonb END,
  CASE WHEN status = 'SUCCEEDED' AND abs(hashint8(i * 3)) % 1000 = 0
    THEN jsonb_build_object('tool', 'undo', 'kind', 'compensation', 'args', null, 'key', md5('comp:' || i),
      'status', 'SUCCEEDED', 'needsHuman', false, 'atEpochMs', extract(epoch FROM created_at) * 1000) END,
  resolution::"Resolution", h >= 995 AND h < 998, 0, 2, created_at,
  created_at + duration_ms * interval '1 millisecond',
  CASE WHEN h < 995 THEN created_at + duration_ms * interval '1 millisecond' END,
  NULL, h >= 980 AND h < 998
FROM s
RETURNING tenant, key, created_at, updated_at, status, ever_unknown, needs_human
)
INSERT INTO intent_events (tenant, key, type, at, data)
SELECT r.tenant, r.key, x.type::"IntentEventType", r.created_at + x.offset_ms * interval '1 millisecond', x.data
FROM ins r
CROSS JOIN LATERAL (
  SELECT * FROM (VALUES
    (1, 'created', 0::float8, '{}'::jsonb),
    (2, 'sent', 1::float8, '{}'::jsonb),
    (3, 'outcome', extract(epoch FROM r.updated_at - r.created_at) * 1000,
      jsonb_build_object('outcome', CASE WHEN r.ever_unknown THEN 'UNKNOWN' ELSE r.status::text END,
        'durationMs', round((extract(epoch FROM r.updated_at - r.created_at) * 1000)::numeric, 3))),
    (4, CASE WHEN r.needs_human THEN 'needs_human' ELSE 'probe' END, 5000::float8, '{}'::jsonb)
  ) v(n, type, offset_ms, data)
  WHERE v.n <= CASE WHEN r.status = 'PENDING' THEN 2 WHEN r.ever_unknown THEN 4 ELSE 3 END
) x
ORDER BY r.created_at`;

/**
 * Writes `records` intent records and their timelines (about 3 events each) into the database at
 * `url`, newest at `endEpochMs`, with triggers off (`session_replication_role = replica`: the fill
 * sets `ever_unknown` itself, and old records must not flood the rollups' dirty queue), then ANALYZE
 * and VACUUM (so index-only scans work as on a settled table).
 * @throws the database's error; needs a superuser (or the owner with replication role rights).
 */
export async function fillIntentLog(url: string, options: FillOptions): Promise<void> {
  const tenants = options.tenants ?? ["default"];
  const tools = options.tools ?? 30;
  const days = options.days ?? 30;
  const end = options.endEpochMs ?? Date.now() - 300_000;
  const chunk = options.chunk ?? 500_000;
  const stepMs = (days * 86_400_000) / options.records;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("SET session_replication_role = replica");
    await client.query("SET synchronous_commit = off");
    for (let from = 1; from <= options.records; from += chunk) {
      const to = Math.min(options.records, from + chunk - 1);
      await client.query(RECORDS_SQL, [options.records, from, to, tools, new Date(end), stepMs, tenants]);
      options.onProgress?.(to);
    }
    await client.query("SET session_replication_role = origin");
    await client.query("VACUUM (ANALYZE) intent_records");
    await client.query("VACUUM (ANALYZE) intent_events");
  } finally {
    await client.end();
  }
}
