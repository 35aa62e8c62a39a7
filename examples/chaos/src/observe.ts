/**
 * What the campaign reads and does besides the agents: the round's intent records (SQL on the
 * campaign's cluster), the remote's effect logs, and an operator resolving queue items from the
 * remote's truth while the sweepers run.
 */
import { randomUUID } from "node:crypto";
import { kwargsOf } from "@tristate/example-tau-bench/catalog";
import type { EffectEntry, ReplayTask } from "@tristate/example-tau-bench/replay";
import canonicalize from "canonicalize";
import type pg from "pg";
import type { AgentResult } from "./agent.ts";
import type { RecordRow, TaskObservation } from "./checker.ts";
import { withRetry } from "./postgres.ts";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Records of runs under `prefix` that no sweep has settled yet (PENDING, or UNKNOWN outside the queue). */
async function unsettled(db: pg.Pool, prefix: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM intent_records WHERE run_id LIKE $1
        AND (status = 'PENDING' OR (status = 'UNKNOWN' AND NOT needs_human))`,
    [`${prefix}.%`],
  );
  return rows[0]?.n ?? 0;
}

/**
 * Confirmed effects of the aborted runs whose tool declares a compensation, with no settled
 * compensation record yet and nothing waiting for a person: their undo may still be on its way.
 * Only a reason to wait; the check itself reads the remote.
 */
async function undoPending(db: pg.Pool, abortedRunIds: readonly string[], tools: readonly string[]): Promise<number> {
  if (!abortedRunIds.length || !tools.length) return 0;
  // Only runs whose abort the executor recorded (an abort no replica answered may never have been).
  const { rows: table } = await db.query<{ t: string | null }>("SELECT to_regclass('run_aborts')::text AS t");
  const recorded = table[0]?.t ? "AND EXISTS (SELECT 1 FROM run_aborts a WHERE a.run_id = o.run_id)" : "";
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM intent_records o WHERE o.run_id = ANY($1) AND o.tool = ANY($2) ${recorded}
        AND o.status = 'SUCCEEDED' AND NOT o.needs_human AND o.step_id NOT LIKE '%:%'
        AND NOT EXISTS (SELECT 1 FROM intent_records c WHERE c.run_id = o.run_id
          AND right(c.step_id, length(o.key) + 1) = ':' || o.key AND (c.status = 'SUCCEEDED' OR c.needs_human))`,
    [abortedRunIds, tools],
  );
  return rows[0]?.n ?? 0;
}

/** How long the campaign waits for undos once nothing is PENDING or UNKNOWN outside the queue, ms. */
const UNDO_WAIT_MS = 60_000;

/**
 * Waits (faults stopped, replicas up) until the sweepers settled the round, at most `timeoutMs`, and
 * then until the aborted runs' compensable effects have their undo settled (or wait for a person),
 * at most {@link UNDO_WAIT_MS} more.
 */
export async function waitSettled(
  db: pg.Pool,
  prefix: string,
  timeoutMs: number,
  aborted: { runIds: readonly string[]; tools: readonly string[] } = { runIds: [], tools: [] },
): Promise<{ waitedMs: number }> {
  const t0 = Date.now();
  let settledAt: number | null = null;
  while (Date.now() - t0 < timeoutMs) {
    const n = await withRetry("unsettled records", () => unsettled(db, prefix));
    if (n === 0) {
      settledAt ??= Date.now();
      const undos = await withRetry("undos", () => undoPending(db, aborted.runIds, aborted.tools));
      if (undos === 0 || Date.now() - settledAt > UNDO_WAIT_MS) break;
    } else settledAt = null;
    await sleep(250);
  }
  return { waitedMs: Date.now() - t0 };
}

interface EffectRow extends EffectEntry {
  /** The changed record (a booking's reservation). */
  record?: unknown;
  at: number;
  visibleAt: number;
}

/** The effect log of one service instance. */
async function effectsOf(serviceUrl: string, segment: string): Promise<EffectRow[]> {
  const res = await fetch(`${serviceUrl}/${segment}/effects`);
  if (!res.ok) throw new Error(`GET ${segment}/effects → ${res.status}`);
  const body = (await res.json()) as { effects: EffectRow[] };
  return body.effects;
}

interface DbRecord {
  key: string;
  run_id: string;
  step_id: string;
  tool: string;
  args: Record<string, unknown>;
  status: RecordRow["status"];
  resolution: string | null;
  needs_human: boolean;
  version: number;
}

const RECORD_COLUMNS = "key, run_id, step_id, tool, args, status::text, resolution::text, needs_human, version";

/**
 * Runs whose abort the executor recorded (`run_aborts`, issue 20 §1), for aborts that were never
 * answered; none before that table exists.
 */
async function recordedAborts(db: pg.Pool, runIds: readonly string[]): Promise<Set<string>> {
  if (!runIds.length) return new Set();
  const { rows: exists } = await db.query<{ t: string | null }>("SELECT to_regclass('run_aborts')::text AS t");
  if (!exists[0]?.t) return new Set();
  const { rows } = await db.query<{ run_id: string }>("SELECT run_id FROM run_aborts WHERE run_id = ANY($1)", [runIds]);
  return new Set(rows.map((r) => r.run_id));
}

/**
 * Reads every task of a round: its records and its instance's effect log. An aborted run whose abort
 * was never answered is judged (every step counting as in flight) only if the executor recorded it.
 */
export async function observeRound(
  db: pg.Pool,
  serviceUrl: string,
  runs: {
    task: ReplayTask;
    runId: string;
    tenant: string;
    aborted: boolean;
    abortAnsweredAt?: number | null;
    agent: AgentResult;
  }[],
): Promise<TaskObservation[]> {
  const { rows } = await withRetry("intent records", () =>
    db.query<DbRecord>(`SELECT ${RECORD_COLUMNS} FROM intent_records WHERE run_id = ANY($1)`, [
      runs.map((r) => r.runId),
    ]),
  );
  const unanswered = runs.filter((r) => r.aborted && r.abortAnsweredAt === null).map((r) => r.runId);
  const recorded = await withRetry("run aborts", () => recordedAborts(db, unanswered));
  return Promise.all(
    runs.map(async (r) => {
      const effects = await effectsOf(serviceUrl, `${r.task.domain}.${r.tenant}`);
      const judged = typeof r.abortAnsweredAt === "number" || (r.abortAnsweredAt === null && recorded.has(r.runId));
      return {
        task: r.task,
        agent: r.agent,
        aborted: r.aborted,
        ...(judged ? { abortAnsweredAt: r.abortAnsweredAt ?? null } : {}),
        records: rows
          .filter((x) => x.run_id === r.runId)
          .map((x) => ({
            key: x.key,
            stepId: x.step_id,
            tool: x.tool,
            args: x.args,
            status: x.status,
            resolution: x.resolution,
            needsHuman: x.needs_human,
          })),
        effects: effects.map((e) => ({ tool: e.tool, args: e.args, record: e.record })),
        lagged: effects.filter((e) => e.visibleAt > e.at + 500).length,
      };
    }),
  );
}

/**
 * One operator action racing the sweepers: a record of the round waiting for a person (else any
 * UNKNOWN one, or a PENDING past its lease — a person may settle both, while sweepers reconcile
 * them; a sweeper or call that got there first makes it a 409) is resolved from the remote's truth — its effect log has the effect (more often than other SUCCEEDED records of the run account
 * for): `confirm_effect`; else `confirm_no_effect`.
 */
export async function operatorAction(
  db: pg.Pool,
  urls: readonly string[],
  adminKey: string,
  serviceUrl: string,
  prefix: string,
  random: () => number,
): Promise<string | null> {
  let rows: DbRecord[];
  try {
    ({ rows } = await db.query<DbRecord>(
      `SELECT ${RECORD_COLUMNS} FROM intent_records WHERE run_id LIKE $1
          AND (status = 'UNKNOWN' OR (status = 'PENDING' AND lease_until_at < now()))
        ORDER BY needs_human DESC, random() LIMIT 20`,
      [`${prefix}.%`],
    ));
  } catch {
    return null; // the cluster is restarting
  }
  const waiting = rows.filter((r) => r.needs_human);
  const pick = (waiting.length ? waiting : rows)[Math.floor(random() * (waiting.length || rows.length))];
  if (!pick) return null;
  const [domain = "", tool = ""] = pick.tool.split(".");
  const tenant = typeof pick.args.tenant === "string" ? pick.args.tenant : "";
  const sig = (args: unknown) => canonicalize(args);
  const mine = sig(kwargsOf(pick.args));
  let effects: EffectRow[];
  let siblings: DbRecord[];
  try {
    effects = (await effectsOf(serviceUrl, `${domain}.${tenant}`)).filter(
      (e) => e.tool === tool && sig(e.args) === mine,
    );
    ({ rows: siblings } = await db.query<DbRecord>(
      `SELECT ${RECORD_COLUMNS} FROM intent_records WHERE run_id = $1 AND key <> $2 AND tool = $3 AND status = 'SUCCEEDED'`,
      [pick.run_id, pick.key, pick.tool],
    ));
  } catch {
    return null;
  }
  const accounted = siblings.filter((s) => sig(kwargsOf(s.args)) === mine).length;
  // Absent: a person who read the remote's log says "no effect" (the agent may then try again, which
  // sends anew); a resend would only repeat a request the remote already refused, as often as it is asked.
  const action = effects.length > accounted ? "confirm_effect" : "confirm_no_effect";
  const input = {
    key: pick.key,
    action,
    note: `chaos operator: the remote's effect log has ${effects.length} matching effect(s)`,
    expectedVersion: pick.version,
    operatorActionId: randomUUID(),
  };
  const label = `${action} on ${pick.key} (${pick.tool}, ${pick.needs_human ? "waiting for a person" : `${pick.status}, sweepers on it`})`;
  const first = Math.floor(random() * urls.length);
  for (let i = 0; i < 3 * urls.length; i++) {
    try {
      const res = await fetch(`${urls[(first + i) % urls.length]}/trpc/queue.resolve`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
        body: JSON.stringify(input),
        signal: AbortSignal.timeout(25_000),
      });
      const text = await res.text();
      if (res.status >= 500) throw new Error(String(res.status));
      const what = res.ok ? "done" : `${res.status} ${(/"message":"([^"]{0,80})/.exec(text)?.[1] ?? "").trim()}`;
      return `${label}: ${what}`;
    } catch {
      await sleep(300); // that replica is down or its database is: the same action (same id) on the next
    }
  }
  return `${label}: no replica answered`;
}
