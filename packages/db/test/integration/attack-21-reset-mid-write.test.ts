/**
 * Attack on issue 21 §1 on real PostgreSQL: the connection to the database is reset (a TCP proxy's
 * `resetAll`) in the middle of the executor's own writes — the claim (committed at the server, its
 * answer lost), and the outcome write after the effect (never reached the server). The call then
 * fails with a transient database error, which the service answers 503 "repeat the same call (same
 * runId, stepId and arguments) … it never runs twice".
 *
 * What must hold, counted at the remote (an `unsafe` refund that does not dedupe keys, with a key
 * probe): following that message — the same call again, at once and in a later turn — ends with
 * exactly one effect, and no answer on the way says SUCCEEDED without the effect or FAILED_NO_EFFECT
 * while one exists or can still be sent.
 */
import { createExecutor, Deadline, type Envelope } from "@tristate/core";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { startTcpProxy, type TcpProxy } from "@tristate/testing/tcp-proxy";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { createTestDatabase } from "../../src/test-database.ts";
import { Cleanup } from "./helpers.ts";

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ARGS = { order_id: "R-1", amount: 10, currency: "EUR", reason: "reset" };
const BUDGET_MS = 4000;

async function setUp() {
  const db = cleanup.add(await createTestDatabase(), (d) => d.drop());
  const direct = new URL(db.url);
  const proxy: TcpProxy = cleanup.add(await startTcpProxy({ targetPort: Number(direct.port || 5432) }), (p) =>
    p.close(),
  );
  const viaProxy = new URL(db.url);
  viaProxy.port = String(proxy.port);
  const store = cleanup.add(new PrismaIntentStore({ databaseUrl: viaProxy.toString() }), (s) => s.close());
  const remote: FakeRemote = cleanup.add(await startFakeRemote({ honorsKey: false }), (r) => r.close());
  const tool = refundTool(remote, { kind: "unsafe", settleMs: 100, probeByIdentity: undefined });
  const errors: unknown[] = [];
  const ex = createExecutor({
    store,
    tools: [tool],
    probe: { spacingMs: 50, timeoutMs: 500, attempts: 2 },
    onBackgroundWriteError: (e) => errors.push(e),
  });
  return { db, proxy, store, remote, ex };
}
type Setup = Awaited<ReturnType<typeof setUp>>;

/** One call of the step; its envelope, or the error it threw (what the service answers 503). */
async function callStep(s: Setup, step: string, budgetMs = BUDGET_MS): Promise<Envelope | Error> {
  try {
    return await s.ex.call({
      runId: "run-reset",
      stepId: step,
      tool: "issue_refund",
      args: ARGS,
      deadline: Deadline.after(budgetMs),
    });
  } catch (error) {
    return error as Error;
  }
}

/**
 * The agent follows the 503: the same call at once, then in later turns (after the first turn's
 * lease) until it settles (an UNKNOWN waits for the probes' absence to become conclusive), at most 6 turns.
 */
async function followThe503(s: Setup, step: string): Promise<Envelope[]> {
  const told: Envelope[] = [];
  const again = await callStep(s, step);
  if (!(again instanceof Error)) told.push(again);
  await sleep(BUDGET_MS + 500); // the first call's lease (its deadline) has passed
  for (let turn = 0; turn < 6 && told.at(-1)?.status !== "SUCCEEDED"; turn++) {
    if (turn > 0) await sleep(1000);
    const later = await callStep(s, step, 10_000);
    expect(later, "a later repeat answers with an envelope").not.toBeInstanceOf(Error);
    told.push(later as Envelope);
  }
  await s.ex.outcomesWritten();
  return told;
}

function expectHonest(told: Envelope[], effects: number) {
  for (const e of told) {
    if (e.status === "SUCCEEDED") expect(effects, "SUCCEEDED told with no effect at the remote").toBe(1);
    if (e.status === "FAILED_NO_EFFECT") expect(effects, "FAILED_NO_EFFECT told with an effect").toBe(0);
  }
  console.log(told.map((e) => `${e.status} ${e.error?.code ?? ""} ${e.resolution ?? ""}: ${e.action_taken}`));
  expect(told.at(-1)?.status, "the step ends settled").toBe("SUCCEEDED");
  expect(effects, "exactly one refund").toBe(1);
}

describe("attack 21: a connection reset in the middle of the executor's own writes", () => {
  it("the claim committed, its answer lost: the call fails (503), and the same call again refunds once", async () => {
    const s = await setUp();
    expect(await callStep(s, "warm")).toMatchObject({ status: "SUCCEEDED" });
    const warmKey = s.remote.keysSeen[0];
    // An uncommitted row under the step's (run, step, tool) holds the claim at the server.
    const locker = cleanup.add(new pg.Client({ connectionString: s.db.url }), (c) => c.end());
    await locker.connect();
    await locker.query("BEGIN");
    await locker.query("CREATE TEMP TABLE held ON COMMIT DROP AS SELECT * FROM intent_records WHERE key = $1", [
      warmKey,
    ]);
    await locker.query("UPDATE held SET key = 'held-key', step_id = 'claim'");
    await locker.query("INSERT INTO intent_records SELECT * FROM held");
    const first = callStep(s, "claim");
    await sleep(300);
    s.proxy.stall(); // the claim's answer will be held here…
    await locker.query("ROLLBACK"); // …while the claim commits at the server
    await sleep(300);
    s.proxy.resetAll();
    s.proxy.resume();
    const answer = await first;
    console.log("claim committed, answer lost →", answer instanceof Error ? `throws ${answer.message}` : answer);
    const told = answer instanceof Error ? [] : [answer];
    expect(s.remote.posts, "nothing sent by the first call").toBe(1);
    told.push(...(await followThe503(s, "claim")));
    expectHonest(told, s.remote.effects.length - 1);
  }, 30_000);

  it("the outcome write lost after the effect: the call fails (503), and the same call again settles it once", async () => {
    const s = await setUp();
    expect(await callStep(s, "warm")).toMatchObject({ status: "SUCCEEDED" });
    s.remote.fault({ respondDelayMs: 300 });
    const first = callStep(s, "write");
    while (s.remote.posts < 2) await sleep(5);
    s.proxy.stall(); // the remote answers in 300 ms: the outcome write meets a stalled database…
    await sleep(600);
    s.proxy.resetAll(); // …and its connection is reset
    s.proxy.resume();
    const answer = await first;
    console.log("outcome write reset →", answer instanceof Error ? `throws ${answer.message}` : answer);
    const told = answer instanceof Error ? [] : [answer];
    told.push(...(await followThe503(s, "write")));
    expectHonest(told, s.remote.effects.length - 1);
  }, 30_000);
});
