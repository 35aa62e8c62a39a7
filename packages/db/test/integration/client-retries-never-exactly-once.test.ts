/**
 * Issue 21 §2 on real PostgreSQL (DESIGN.md rule 11): an `unsafe` refund tool whose `invoke` posts
 * through a composed undici dispatcher with the retry interceptor (`methods: ["POST"]`,
 * `statusCodes: [503]`). The remote commits every POST it reads; the first is answered 503. Before
 * the fix the interceptor posted again, the second answered 201: two refunds at the remote, and the
 * agent was told "The effect happened exactly once".
 *
 * Now: the interceptor's repeat is refused before its head is written (one refund), the call is
 * UNKNOWN as its one written request's 503 says, and the operator reads every attempt in the
 * record's timeline; and where a repeat cannot be refused (a node:http client on a reused
 * keep-alive socket) the call waits in the human queue as REPEATED_WRITE, "possibly more than one
 * effect", never SUCCEEDED. A keyed tool keeps today's behaviour (the remote dedupes the key).
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { canon, createExecutor, Deadline, defineTool, type Envelope } from "@tristate/core";
import { Agent, interceptors, request } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { getIntent, listIntents } from "../../src/queries/index.ts";
import { createTestDatabase } from "../../src/test-database.ts";
import { Cleanup } from "./helpers.ts";

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** Commits every POST (the effect, with its Idempotency-Key); the first is answered 503, the rest 201. */
async function commitThen503(): Promise<{ origin: string; effects: (string | undefined)[] }> {
  const effects: (string | undefined)[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const key = req.headers["idempotency-key"];
      effects.push(typeof key === "string" ? key : undefined);
      const status = effects.length === 1 ? 503 : 201;
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ id: `re_${effects.length}` }));
    });
  });
  server.keepAliveTimeout = 10_000;
  cleanup.server(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, effects };
}

/** undici's retry interceptor, composed as the tool does. */
function retryingDispatcher() {
  const agent = new Agent();
  cleanup.add(null, () => agent.close());
  return agent.compose(interceptors.retry({ maxRetries: 2, methods: ["POST"], statusCodes: [503], minTimeout: 1 }));
}

async function postThroughUndici(dispatcher: ReturnType<typeof retryingDispatcher>, url: string, key: string) {
  const res = await request(url, {
    method: "POST",
    body: "{}",
    headers: { "idempotency-key": key },
    dispatcher,
  });
  const body = await res.body.json();
  if (res.statusCode >= 300) throw Object.assign(new Error(`HTTP ${res.statusCode}`), { statusCode: res.statusCode });
  return body;
}

/** A node:http POST on a keep-alive agent, retried once on 503 (the head of the retry goes out on the reused socket). */
function nodeRetryingPost(agent: http.Agent, url: string): Promise<unknown> {
  const once503 = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = http.request(url, { method: "POST", agent });
      req.on("error", reject);
      req.on("response", (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      req.end("{}");
    });
  return once503().then((status) => (status === 503 ? once503() : status));
}

async function setup(kind: "unsafe" | "idempotent_by_key", invoke: (key: string) => Promise<unknown>) {
  const db = cleanup.add(await createTestDatabase(), (d) => d.drop());
  const store = cleanup.add(new PrismaIntentStore({ databaseUrl: db.url, poolSize: 3 }), (s) => s.close());
  const tool = defineTool({
    name: "issue_refund",
    kind,
    identity: { order_id: canon.upper },
    timeoutMs: 8_000,
    invoke: (_args, ctx) => invoke(ctx.idempotencyKey),
  });
  const executor = createExecutor({ store, tools: [tool] });
  const envelope: Envelope = await executor.call({
    runId: "run-21-2",
    stepId: "refund",
    tool: "issue_refund",
    args: { order_id: "A-2102" },
    deadline: Deadline.after(20_000),
  });
  await executor.outcomesWritten();
  const detail = await getIntent(store.prisma, envelope.idempotency_key);
  const queue = await listIntents(store.prisma, { filters: { resolution: "needs_human" } });
  return { envelope, detail, queue };
}

describe("a transport that retries on its own never yields 'exactly once' (issue 21 §2), real PostgreSQL", () => {
  it("undici's retry interceptor on an unsafe tool: the repeat is refused before it is written; one refund, UNKNOWN", async () => {
    const remote = await commitThen503();
    const dispatcher = retryingDispatcher();
    const { envelope, detail } = await setup("unsafe", (key) =>
      postThroughUndici(dispatcher, `${remote.origin}/refunds`, key),
    );
    expect(remote.effects).toHaveLength(1); // before the fix: 2
    expect(envelope).toMatchObject({ status: "UNKNOWN", retry_safe: false }); // before: SUCCEEDED
    expect(envelope.message).not.toContain("exactly once");
    const outcome = detail?.events.find((e) => e.type === "outcome");
    expect(outcome?.data).toMatchObject({ outcome: "UNKNOWN", code: "GATEWAY_5XX" });
    expect(String(outcome?.data.attempts)).toContain(
      "#1 written, answered 503; #2 refused before its head was written",
    );
  });

  it("a repeat already on the wire (node:http, reused keep-alive socket): REPEATED_WRITE in the human queue with every attempt", async () => {
    const remote = await commitThen503();
    const agent = new http.Agent({ keepAlive: true });
    cleanup.add(null, () => agent.destroy());
    const { envelope, detail, queue } = await setup("unsafe", () =>
      nodeRetryingPost(agent, `${remote.origin}/refunds`),
    );
    expect(remote.effects).toHaveLength(2);
    expect(envelope).toMatchObject({ status: "UNKNOWN", retry_safe: false, resolution: "needs_human" });
    expect(envelope.message).not.toContain("exactly once");
    expect(detail?.record).toMatchObject({ status: "UNKNOWN", needsHuman: true });
    expect(detail?.record.error).toMatchObject({ code: "REPEATED_WRITE" });
    expect(queue.items.map((i) => i.key)).toEqual([envelope.idempotency_key]);
    const reason = String(detail?.events.find((e) => e.type === "needs_human")?.data.reason);
    expect(reason).toContain("possibly more than one effect");
    expect(reason).toContain("#1 written, answered 503; #2 written, answered 201");
  });

  it("idempotent_by_key: the interceptor's same-key retry is deduped by the remote; SUCCEEDED (today's behaviour)", async () => {
    const remote = await commitThen503();
    const dispatcher = retryingDispatcher();
    const { envelope } = await setup("idempotent_by_key", (key) =>
      postThroughUndici(dispatcher, `${remote.origin}/refunds`, key),
    );
    expect(remote.effects).toEqual([envelope.idempotency_key, envelope.idempotency_key]);
    expect(envelope).toMatchObject({ status: "SUCCEEDED", retry_safe: true });
  });
});
