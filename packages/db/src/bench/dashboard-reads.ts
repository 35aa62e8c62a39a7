/**
 * The dashboard's reads as `pnpm bench:dashboard` times them: the same query functions the executor's
 * API procedures call (`stats.overview`, `intents.list`, `queue.list`, `stale.list`, `audit.list`,
 * `runs.get`, `intents.get`), on tenant `default` of a filled database.
 */
import pg from "pg";
import type { PrismaClient } from "../generated/prisma/client.ts";
import { PrismaOperatorStore } from "../operator-store.ts";
import { getIntent, getRun, listIntents, listStale, statsOverview } from "../queries/index.ts";

/** One named read: `run()` performs it once. */
export interface DashboardRead {
  name: string;
  run(): Promise<unknown>;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const TENANT = "default";

/** A cursor of `intents.list` that starts a page at (createdAtEpochMs, key) (as its `nextCursor` does). */
function cursorAt(createdAtEpochMs: number, key: string): string {
  return Buffer.from(JSON.stringify([createdAtEpochMs, key]), "utf8").toString("base64url");
}

/** A record about `ageMs` old matching `where`, as a keyset cursor (a deep page: 15 days back). */
async function deepCursor(client: pg.Client, where: string, ageMs: number): Promise<string> {
  const { rows } = await client.query<{ ms: string; key: string }>(
    `SELECT (extract(epoch FROM created_at) * 1000)::bigint::text AS ms, key FROM intent_records
     WHERE tenant = $1 AND ${where} AND created_at <= now() - $2 * interval '1 millisecond'
     ORDER BY created_at DESC, key DESC LIMIT 1`,
    [TENANT, ageMs],
  );
  const row = rows[0];
  return row ? cursorAt(Number(row.ms), row.key) : cursorAt(Date.now(), "f".repeat(32));
}

/**
 * The reads of the benchmark, with their inputs picked from the database at `url` (deep-page cursors
 * 15 days back, a run id and a key from the middle of the log).
 */
export async function dashboardReads(prisma: PrismaClient, url: string): Promise<DashboardRead[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let mid: { key: string; run_id: string };
  const deep: Record<string, string> = {};
  try {
    const { rows } = await client.query<{ key: string; run_id: string }>(
      `SELECT key, run_id FROM intent_records WHERE tenant = $1 AND created_at <= now() - interval '12 days'
       ORDER BY created_at DESC LIMIT 1`,
      [TENANT],
    );
    mid = rows[0] ?? { key: "0".repeat(32), run_id: "run-0" };
    deep.all = await deepCursor(client, "true", 15 * DAY);
    deep.failed = await deepCursor(client, "status = 'FAILED_NO_EFFECT'", 15 * DAY);
    deep.tool = await deepCursor(client, "tool = 'tool_07'", 15 * DAY);
    deep.human = await deepCursor(client, "needs_human", 15 * DAY);
  } finally {
    await client.end();
  }
  const operator = new PrismaOperatorStore(prisma, TENANT);
  const overview = (windowMs: number) => () => {
    const now = Date.now();
    return statsOverview(
      prisma,
      { fromEpochMs: now - windowMs, toEpochMs: now, staleNowEpochMs: now },
      { tenant: TENANT },
    );
  };
  const list = (filters: Parameters<typeof listIntents>[1] & object, cursor?: string) => () =>
    listIntents(prisma, { ...filters, ...(cursor ? { cursor } : {}), limit: 50 }, { tenant: TENANT });
  return [
    { name: "stats.overview 1 h", run: overview(HOUR) },
    { name: "stats.overview 24 h", run: overview(DAY) },
    { name: "stats.overview 7 d", run: overview(7 * DAY) },
    { name: "stats.overview 30 d", run: overview(30 * DAY) },
    { name: "stats.overview 30 d, all tenants", run: () => overviewAll(prisma) },
    { name: "intents.list first page", run: list({}) },
    { name: "intents.list deep page (15 d back)", run: list({}, deep.all) },
    { name: "intents.list FAILED_NO_EFFECT, first page", run: list({ filters: { status: "FAILED_NO_EFFECT" } }) },
    {
      name: "intents.list FAILED_NO_EFFECT, deep page",
      run: list({ filters: { status: "FAILED_NO_EFFECT" } }, deep.failed),
    },
    { name: "intents.list tool, deep page", run: list({ filters: { tool: "tool_07" } }, deep.tool) },
    { name: "intents.list PENDING, first page", run: list({ filters: { status: "PENDING" } }) },
    { name: "intents.list needsHuman, deep page", run: list({ filters: { needsHuman: true } }, deep.human) },
    { name: "intents.list resolution found, first page", run: list({ filters: { resolution: "found" } }) },
    { name: "intents.list last 24 h, first page", run: list({ filters: { fromEpochMs: Date.now() - DAY } }) },
    // The search box tries a 32-hex value as a key, then as a trace id (the trace index; none of the fill's records is traced).
    { name: "intents.list traceId (search)", run: list({ filters: { traceId: "0af7651916cd43dd8448eb211c80319c" } }) },
    { name: "queue.list", run: () => operator.listNeedsHuman({ tenant: TENANT, limit: 100 }) },
    { name: "stale.list", run: () => listStale(prisma, { nowEpochMs: Date.now(), limit: 50 }, { tenant: TENANT }) },
    { name: "audit.list", run: () => operator.listAudit({ tenant: TENANT, limit: 50 }) },
    { name: "runs.get", run: () => getRun(prisma, mid.run_id, { tenant: TENANT }) },
    { name: "intents.get (record)", run: () => getIntent(prisma, mid.key, { tenant: TENANT }) },
  ];
}

function overviewAll(prisma: PrismaClient) {
  const now = Date.now();
  return statsOverview(prisma, { fromEpochMs: now - 30 * DAY, toEpochMs: now, staleNowEpochMs: now });
}

/** Appends `n` audit entries (operator actions over the last 30 days) by SQL, for `audit.list`. */
export async function fillAudit(url: string, n: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO audit_entries (tenant, operator_action_id, actor_key_id, actor_name, at, action, note, key, tool,
         before, after)
       SELECT $1, 'op-' || i, 'key-' || (i % 5), 'operator ' || (i % 5),
         now() - (($2::int - i) * (30 * 86400000.0 / $2::int)) * interval '1 millisecond',
         (ARRAY['confirm_effect', 'confirm_no_effect', 'resend_same_key'])[1 + i % 3], 'checked with the payee',
         md5('audit:' || i), 'tool_' || lpad((i % 30)::text, 2, '0'), '{}'::jsonb, '{}'::jsonb
       FROM generate_series(1, $2::int) AS i`,
      [TENANT, n],
    );
  } finally {
    await client.end();
  }
}
