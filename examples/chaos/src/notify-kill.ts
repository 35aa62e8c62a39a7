/**
 * `pnpm chaos --scenario notify-kill` (issue 23 §3): an executor is SIGKILLed mid-delivery of its
 * notifications — while its webhook's request is at the receiver — and started again. The
 * receiver (node:http) processes a delivery the first time it sees its `Idempotency-Key` and drops
 * repeats, as docs/notifications.md tells receivers to. Checks: every `human_queue` event the
 * database holds reached the receiver at least once; deduplicated by `Idempotency-Key`, none was
 * processed twice (no event under two keys); every signature verifies; every delivery ends delivered.
 * Reports raw arrivals against distinct keys. The records are made first with no delivery loop (the
 * agent never meets a kill); the executor is then started with it. About 40–60 s, most of it starting PostgreSQL and the executor.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { ApiKeyStore, createPrismaIntentStore } from "@tristate/db";
import { createTempCluster, freePort, withRetry } from "./postgres.ts";
import { ReplicaSet } from "./replicas.ts";

/** Records that enter the human queue (one event, one delivery each: no grouping window). */
const RECORDS = 30;
/** SIGKILLs, each at the first delivery request after the executor (re)started. */
const KILLS = 1;
/**
 * Longest wait for every delivery after the delivery loop starts, ms: a killed send is taken again
 * after its lease (20 s), its record reconciled by the sweeper after the send's own lease (≈ 15 s).
 */
const TIMEOUT_MS = 45_000;

interface Arrival {
  key: string;
  body: string;
  signature: string;
}

/** The outcome of the scenario. */
export interface NotifyKillReport {
  ok: boolean;
  kills: number;
  events: number;
  rawArrivals: number;
  distinctKeys: number;
  duplicatesDropped: number;
  /** Events processed more than once (under two keys): must be none. */
  processedTwice: string[];
  /** Events never received: must be none. */
  missing: string[];
  badSignatures: number;
  undelivered: number;
  seconds: number;
}

function signatureValid(secret: string, header: string, body: string): boolean {
  const f = Object.fromEntries(header.split(",").map((p) => p.split("=")));
  const expected = createHmac("sha256", secret).update(`${f.t}.${body}`).digest();
  const given = Buffer.from(f.v1 ?? "", "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A webhook receiver that answers after `holdMs` (so a kill lands while the request is in flight). */
async function startReceiver(onArrival: (a: Arrival) => void, holdMs: number) {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const headers: IncomingHttpHeaders = req.headers;
      onArrival({
        key: String(headers["idempotency-key"] ?? ""),
        body: Buffer.concat(chunks).toString("utf8"),
        signature: String(headers["tristate-signature"] ?? ""),
      });
      setTimeout(() => res.writeHead(200).end("ok"), holdMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () => new Promise<void>((r) => server.close(() => r())).finally(() => server.closeAllConnections()),
  };
}

/** A tRPC answer, walked loosely (`json.result.data.secret`). */
interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: an answer is walked freely and checked where it matters
  json: any;
}

async function post(url: string, path: string, key: string, body: unknown): Promise<Answer> {
  const res = await fetch(`${url}/trpc/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

/** Puts one record in the human queue, repeating the same call while the executor is down. */
async function queueRecord(url: string, agentKey: string, i: number): Promise<void> {
  const input = { runId: "run-notify-kill", stepId: `q-${i}`, tool: "limbo", args: { id: `q-${i}` } };
  await withRetry(
    `queue record ${i}`,
    async () => {
      const res = await post(url, "calls.execute", agentKey, input);
      if (res.status !== 200 || res.json.result.data.resolution !== "needs_human")
        throw new Error(`calls.execute answered ${res.status}`);
    },
    30_000,
  );
}

/** Runs the scenario on a temporary PostgreSQL cluster with one executor process. */
export async function runNotifyKill(log: (line: string) => void = console.log): Promise<NotifyKillReport> {
  const started = Date.now();
  const cluster = await createTempCluster();
  const replicas = new ReplicaSet({
    ports: [await freePort()],
    env: {
      DATABASE_URL: cluster.url,
      TRISTATE_CONFIG: resolve(import.meta.dirname, "notify-catalog.config.ts"),
      // No delivery loop while the records are made (agents never meet a kill); on from the restart.
      TRISTATE_NOTIFY_INTERVAL_MS: "0",
      TRISTATE_NOTIFY_GROUP_WINDOW_MS: "0",
      TRISTATE_SWEEP_INTERVAL_MS: "500",
      TRISTATE_SHUTDOWN_GRACE_MS: "0",
      TRISTATE_ROLLUP_INTERVAL_MS: "0",
      // The webhook receiver listens on loopback, which the default (`*`: public only) refuses.
      TRISTATE_NOTIFY_ALLOW_HOSTS: "127.0.0.1,localhost",
    },
  });
  const arrivals: Arrival[] = [];
  let kills = 0;
  let armed = false;
  let killing: Promise<void> | null = null;
  const replica = replicas.replicas[0]!;
  const receiver = await startReceiver((a) => {
    arrivals.push(a);
    // SIGKILL while this request waits for its answer (the executor has not recorded it yet).
    if (armed && kills < KILLS && !killing && !replica.starting && replica.child) {
      kills += 1;
      log(`notify-kill: SIGKILL of the executor mid-delivery (${a.key}), kill ${kills} of ${KILLS}`);
      killing = replicas.killAndRestart(replica).finally(() => {
        killing = null;
      });
    }
  }, 1500);
  try {
    await replicas.start(replica);
    const store = createPrismaIntentStore({ databaseUrl: cluster.url });
    const keys = new ApiKeyStore(store.prisma);
    const adminKey = (await keys.create({ name: "notify-kill admin", role: "admin" })).secret;
    const agentKey = (await keys.create({ name: "notify-kill agent", role: "agent" })).secret;
    await store.close();
    const made = await post(replica.url, "notifications.channels.create", adminKey, {
      kind: "webhook",
      name: "chaos receiver",
      url: receiver.url,
    });
    if (made.status !== 200) throw new Error(`channels.create answered ${made.status}: ${JSON.stringify(made.json)}`);
    const secret: string = made.json.result.data.secret;
    for (let i = 0; i < RECORDS; i += 5) {
      await Promise.all(Array.from({ length: 5 }, (_, j) => queueRecord(replica.url, agentKey, i + j)));
    }
    // Now the delivery loop: restart the executor with it (the events wait in the outbox meanwhile).
    replicas.setEnv({ TRISTATE_NOTIFY_INTERVAL_MS: "100" });
    await replicas.kill(replica);
    armed = true;
    await replicas.start(replica);
    const armedAt = Date.now();
    const expected = async () =>
      (
        await cluster.pool.query<{ id: string }>(
          "SELECT id FROM notification_events WHERE kind = 'human_queue' ORDER BY id",
        )
      ).rows.map((r) => r.id);
    const pending = async () =>
      (
        await cluster.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM notification_deliveries WHERE status <> 'delivered'",
        )
      ).rows[0]!.n;
    // Wait until every event arrived and every delivery is closed (leases of killed sends run out).
    let events: string[] = [];
    for (;;) {
      events = await withRetry("read the outbox", expected);
      const seen = new Set(arrivals.flatMap((a) => (JSON.parse(a.body).events as { id: string }[]).map((e) => e.id)));
      const open = await withRetry("read the deliveries", pending);
      if (events.length >= RECORDS && events.every((e) => seen.has(e)) && open === 0 && !killing) break;
      if (Date.now() - armedAt > TIMEOUT_MS) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    // The receiver's processing: the first arrival of each key is processed, repeats are dropped.
    const processed = new Map<string, string>(); // event id -> the key it was processed under
    const processedTwice: string[] = [];
    const keysSeen = new Set<string>();
    for (const a of arrivals) {
      if (keysSeen.has(a.key)) continue;
      keysSeen.add(a.key);
      for (const e of JSON.parse(a.body).events as { id: string }[]) {
        if (processed.has(e.id)) processedTwice.push(e.id);
        processed.set(e.id, a.key);
      }
    }
    const missing = events.filter((e) => !processed.has(e));
    const undelivered = await withRetry("read the deliveries", pending);
    if (undelivered > 0 || missing.length > 0) {
      // What the database holds, for the reproduction.
      const d = await cluster.pool.query(
        "SELECT id, status, attempts, last_error, lease_until, next_attempt_at, now() AS now FROM notification_deliveries",
      );
      const r = await cluster.pool.query(
        "SELECT step_id, status, attempt, needs_human, lease_until_at, recheck_at, error->>'code' AS code FROM intent_records WHERE tool LIKE 'tristate.%'",
      );
      log(`notify-kill: deliveries ${JSON.stringify(d.rows)}`);
      log(`notify-kill: notification records ${JSON.stringify(r.rows)}`);
      log(`notify-kill: executor crashes ${JSON.stringify(replica.crashes.map((c) => c.output.slice(-800)))}`);
    }
    const badSignatures = arrivals.filter((a) => !signatureValid(secret, a.signature, a.body)).length;
    const report: NotifyKillReport = {
      ok:
        kills === KILLS &&
        events.length === RECORDS &&
        missing.length === 0 &&
        processedTwice.length === 0 &&
        badSignatures === 0 &&
        undelivered === 0,
      kills,
      events: events.length,
      rawArrivals: arrivals.length,
      distinctKeys: keysSeen.size,
      duplicatesDropped: arrivals.length - keysSeen.size,
      processedTwice,
      missing,
      badSignatures,
      undelivered,
      seconds: Math.round((Date.now() - started) / 100) / 10,
    };
    return report;
  } finally {
    await replicas.stopAll();
    await receiver.close();
    await cluster.remove();
  }
}

/** The report as the lines `pnpm chaos` prints. */
export function notifyKillLines(r: NotifyKillReport): string[] {
  return [
    `notify-kill: ${r.ok ? "passed" : "FAILED"} in ${r.seconds} s — ${r.kills} SIGKILLs mid-delivery, ${r.events} events`,
    `  receiver: ${r.rawArrivals} raw arrivals, ${r.distinctKeys} distinct Idempotency-Keys (${r.duplicatesDropped} repeats dropped)`,
    `  every event received: ${r.missing.length === 0 ? "yes" : `no, missing ${r.missing.join(", ")}`}; processed twice: ${r.processedTwice.length}; bad signatures: ${r.badSignatures}; deliveries not delivered: ${r.undelivered}`,
  ];
}
