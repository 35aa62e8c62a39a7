/**
 * Regressions of the attack on "never a duplicate effect, never a silent gap" that need no database
 * (fixed in 3599041; the PostgreSQL ones live in packages/db/test/integration/attack-regressions*.test.ts):
 *
 * - B3 (rule 11): a tool starts a request without awaiting it (after an async credentials read) and
 *   then throws a TypeError. The request shows up within the tracker's 250 ms grace: the call is
 *   UNKNOWN, never FAILED_NO_EFFECT `TOOL_ERROR_NOT_SENT` (retry_safe: true) while the effect exists.
 * - B9 (rule 11): an SDK that retries on its own through a shared queue whose tasks run outside the
 *   invoke's async context. An ECONNREFUSED whose request the tracker never saw is UNKNOWN, not
 *   FAILED_NO_EFFECT: an earlier attempt of the same invoke, out of sight too, may have been written.
 * - B12: `defineTool` refuses `settleMs` > 7 days and `timeoutMs` > 24 h, naming the field (such
 *   values made settle times and leases invalid dates after the request had gone out).
 *
 * Every remote is a real loopback HTTP server; the store is the in-memory one (only logic matters).
 */
import { AsyncResource } from "node:async_hooks";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { Deadline } from "../../src/deadline.ts";
import { createExecutor, type Executor } from "../../src/executor.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { type AnyTool, defineTool } from "../../src/tool.ts";
import { sleep, waitFor } from "./support.ts";

const REFUND = { order_id: "D-4", amount: "49.90", currency: "EUR", reason: "arrived broken" };
const IDENTITY = { order_id: canon.upper, amount: canon.decimal(2) };
const PROBE = { attempts: 2, spacingMs: 20, timeoutMs: 300 };

function executorFor(store: MemoryIntentStore, tool: AnyTool): Executor {
  return createExecutor({ store, tools: [tool], probe: PROBE, reserveMs: 100, minCallBudgetMs: 100 });
}

describe("B3: a request fired without await, then a code error (rule 11, 250 ms grace)", () => {
  let remote: FakeRemote;
  let dir: string;
  let tokenFile: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "tristate-b3-"));
    tokenFile = join(dir, "token");
    writeFileSync(tokenFile, "tok_123");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  afterEach(() => remote.close());

  /**
   * A tool whose SDK reads cached credentials from disk before it calls fetch, and whose own code
   * starts that call without awaiting it and then throws a TypeError (reading `args.metadata.note`).
   * `delayMs` adds a timer before the request (still well inside the 250 ms grace).
   */
  function fireAndForgetTool(kind: "unsafe" | "idempotent_by_key", delayMs = 0) {
    return defineTool({
      name: "issue_refund",
      kind,
      identity: IDENTITY,
      timeoutMs: 1000,
      invoke: async (args: Record<string, unknown>, ctx) => {
        const pending = (async () => {
          const token = await readFile(tokenFile, "utf8");
          if (delayMs > 0) await sleep(delayMs);
          const res = await fetch(`${remote.url}/effects`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${token}`,
              "content-type": "application/json",
              "idempotency-key": ctx.idempotencyKey,
            },
            body: JSON.stringify(args),
          });
          return res.json();
        })();
        pending.catch(() => {});
        // The tool's bug: TypeError, cannot read properties of undefined (reading 'note').
        return (args.metadata as { note: string }).note.trim();
      },
    });
  }

  for (const [kind, delayMs] of [
    ["unsafe", 0],
    ["idempotent_by_key", 0],
    ["unsafe", 100],
  ] as const) {
    it(`${kind}, request ${delayMs ? `${delayMs} ms after a` : "right after an async"} credentials read: the agent is told UNKNOWN (retry_safe false), never TOOL_ERROR_NOT_SENT; its repeat call makes no second effect`, async () => {
      remote = await startFakeRemote({ honorsKey: kind === "idempotent_by_key" });
      const store = new MemoryIntentStore();
      const ex = executorFor(store, fireAndForgetTool(kind, delayMs));
      const input = { runId: `run-b3-${kind}-${delayMs}`, stepId: "refund", tool: "issue_refund", args: REFUND };
      const key = ex.keyFor(input);

      const told = await ex.call({ ...input, deadline: Deadline.after(5000) });
      await waitFor(() => remote.effects.length === 1, 2000); // the request did take effect
      expect(told.status).toBe("UNKNOWN");
      expect(told.retry_safe).toBe(false);
      expect(told.error?.code).not.toBe("TOOL_ERROR_NOT_SENT");
      const record = await store.get(key);
      expect(record?.status).not.toBe("FAILED_NO_EFFECT");

      // The agent calls again (the model "retries"): the effect must not happen twice.
      const again = await ex.call({ ...input, deadline: Deadline.after(5000) });
      await sleep(150); // a fire-and-forget request of the repeat call would land by now
      expect(again.status).not.toBe("FAILED_NO_EFFECT");
      expect(remote.effects).toHaveLength(1);
      if (kind === "unsafe") {
        // No probe, no dedupe: nothing is resent; a person decides.
        expect(remote.posts).toBe(1);
        expect(await store.get(key)).toMatchObject({ status: "UNKNOWN", needsHuman: true });
      }
    });
  }

  it("control: a code error that started no request at all is still FAILED_NO_EFFECT TOOL_ERROR_NOT_SENT (nothing at the remote)", async () => {
    remote = await startFakeRemote({ honorsKey: false });
    const tool = defineTool({
      name: "issue_refund",
      kind: "unsafe",
      identity: IDENTITY,
      timeoutMs: 1000,
      invoke: async (args: Record<string, unknown>) => (args.metadata as { note: string }).note.trim(),
    });
    const ex = executorFor(new MemoryIntentStore(), tool);
    const told = await ex.call({
      runId: "run-b3-control",
      stepId: "refund",
      tool: "issue_refund",
      args: REFUND,
      deadline: Deadline.after(5000),
    });
    expect(told).toMatchObject({
      status: "FAILED_NO_EFFECT",
      retry_safe: true,
      error: { code: "TOOL_ERROR_NOT_SENT" },
    });
    expect(remote.posts).toBe(0);
  });
});

/**
 * A refund endpoint on a fixed port that can die: a POST with `dieOnNext` commits the refund, resets
 * the connection and stops listening (the next connection is refused) until {@link RestartableRemote.up}.
 */
interface RestartableRemote {
  readonly base: string;
  /** Refunds committed. */
  effects: number;
  dieOnNext: boolean;
  up(): Promise<void>;
  close(): Promise<void>;
}

async function startRestartableRemote(): Promise<RestartableRemote> {
  let server: Server;
  let port = 0;
  const state = { effects: 0, dieOnNext: false };
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (c: Buffer) => chunks.push(c));
        req.on("end", () => {
          if (req.url === "/slow") return setTimeout(() => res.end("{}"), 150);
          state.effects++;
          if (state.dieOnNext) {
            state.dieOnNext = false;
            req.socket.resetAndDestroy(); // committed, then the box dies
            server.close();
            server.closeAllConnections();
            return;
          }
          res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ id: `re_${state.effects}` }));
        });
      });
      server.listen(port, "127.0.0.1", () => {
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  await listen();
  return Object.assign(state, {
    base: `http://127.0.0.1:${port}`,
    up: listen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as RestartableRemote;
}

describe("B9: an SDK retrying through a shared queue (rule 11: the whole invoke)", () => {
  let remote: RestartableRemote;
  afterEach(() => remote.close());

  /** The unsafe refund tool over `post` (an SDK call that retries twice and throws the last error). */
  function sdkTool(post: (path: string, body: unknown) => Promise<unknown>) {
    return defineTool({
      name: "issue_refund",
      kind: "unsafe",
      identity: IDENTITY,
      timeoutMs: 1000,
      invoke: async (args) => post("/refunds", args),
    });
  }

  /** Two attempts, 20 ms apart, each through `dispatch`; throws the last error (fetch failed / ECONNREFUSED). */
  function retrying(dispatch: <T>(task: () => Promise<T>) => Promise<T>) {
    return async (path: string, body: unknown) => {
      let last: unknown;
      for (let attempt = 1; attempt <= 2; attempt++) {
        try {
          const res = await dispatch(() =>
            fetch(`${remote.base}${path}`, {
              method: "POST",
              body: JSON.stringify(body),
              headers: { "content-type": "application/json" },
            }),
          );
          return await res.json();
        } catch (error) {
          last = error;
          await sleep(20);
        }
      }
      throw last;
    };
  }

  async function scenario(post: (path: string, body: unknown) => Promise<unknown>, beside?: Promise<unknown>) {
    const store = new MemoryIntentStore();
    const ex = executorFor(store, sdkTool(post));
    const input = { runId: "run-b9", stepId: "refund", tool: "issue_refund", args: { ...REFUND, order_id: "J-10" } };
    remote.dieOnNext = true;
    const first = await ex.call({ ...input, deadline: Deadline.after(5000) });
    await beside;
    const effectsAfterFirst = remote.effects;
    await remote.up(); // the remote is back
    const retry = await ex.call({ ...input, deadline: Deadline.after(5000) });
    return { first, retry, effectsAfterFirst, record: await store.get(ex.keyFor(input)) };
  }

  it("every request runs in the queue's own context (the tracker sees none): attempt 1 committed then reset, attempt 2 refused → UNKNOWN, retry_safe false; the agent's retry makes no second refund", async () => {
    remote = await startRestartableRemote();
    // The SDK's rate-limit queue pumps its tasks in the context it was created in, outside any invoke.
    const pump = AsyncResource.bind(<T>(task: () => Promise<T>) => task());
    const { first, retry, effectsAfterFirst, record } = await scenario(retrying(pump));
    expect(effectsAfterFirst).toBe(1);
    expect(first).toMatchObject({ status: "UNKNOWN", retry_safe: false });
    expect(retry.status).not.toBe("SUCCEEDED");
    expect(record).toMatchObject({ status: "UNKNOWN", needsHuman: true });
    expect(remote.effects).toBe(1);
  });

  // Known limitation, not tested as fixed (attack scripts a10 and a17 undici-pool; invoke-tracker.ts
  // "Limits", README): a client whose queue or pool runs attempt 1 in another caller's async context
  // while a later attempt runs in the invoke's own context hides the written attempt 1; when that later
  // attempt is refused (I/O seen, nothing written) the call is FAILED_NO_EFFECT NOT_SENT. The tracker
  // cannot see work a client moves out of the call's context; such clients should bind their queued
  // work to its context (AsyncResource.bind) or report their retries on the error (retryCount).
});

describe("B12: defineTool bounds settleMs (7 days) and timeoutMs (24 h), naming the field", () => {
  const base = {
    name: "issue_refund",
    kind: "unsafe" as const,
    identity: IDENTITY,
    invoke: async () => ({}),
  };
  const DAY = 24 * 3600_000;

  it.each([7 * DAY + 1, 30 * DAY, 1e16])("settleMs %d is refused with an error naming settleMs", (settleMs) => {
    expect(() => defineTool({ ...base, timeoutMs: 500, settleMs })).toThrow(/issue_refund.*settleMs must be at most/);
  });

  it.each([DAY + 1, Number.MAX_SAFE_INTEGER])("timeoutMs %d is refused with an error naming timeoutMs", (timeoutMs) => {
    expect(() => defineTool({ ...base, timeoutMs, settleMs: 1000 })).toThrow(/issue_refund.*timeoutMs must be at most/);
  });

  it("the bounds themselves are accepted: settleMs = 7 days, timeoutMs = 24 h", () => {
    const tool = defineTool({ ...base, timeoutMs: DAY, settleMs: 7 * DAY });
    expect(tool.timeoutMs).toBe(DAY);
    expect(tool.settleMs).toBe(7 * DAY);
  });

  it("a refund tool declaring settleMs above the bound never reaches an executor", () => {
    const remote = { url: "http://127.0.0.1:9" } as FakeRemote;
    expect(() => refundTool(remote, { kind: "unsafe", settleMs: 8 * DAY, probe: undefined })).toThrow(TypeError);
  });
});
