/**
 * Issue 9 §8: error messages stored on records and events never contain argument values that are
 * not marked loggable. A tool with `{email}` in its URL path gets a 404 (the error names the path,
 * and the SDK-style wrapper echoes the address and the remote's answer); its probe fails with an
 * error echoing the full URL (path and form-encoded query). The address — raw, percent-encoded or
 * form-encoded, in any case — appears nowhere in `record.error.message`, in any event's data, or in
 * the envelope; a field marked in `loggableFields` stays visible.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:http";
import { listenLoopback, startTripServices, tripTools } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { canon } from "../../src/canon.ts";
import { Deadline } from "../../src/deadline.ts";
import { isAmbiguousError, isRejectedError, RejectedError } from "../../src/errors.ts";
import { createExecutor, type Executor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { defineTool } from "../../src/tool.ts";

const EMAIL = "Ana.Lopez+refunds@Example.com";
const ORDER_ID = "ORD-7731";
const ARGS = { email: EMAIL, order_id: ORDER_ID, amount: "49.90" };
/** Every form the address can take in text, lower-cased (the check is case-insensitive). */
const FORMS = [
  EMAIL,
  encodeURIComponent(EMAIL), // Ana.Lopez%2Brefunds%40Example.com
  new URLSearchParams({ v: EMAIL }).toString().slice(2), // form-encoded query value
  "ana.lopez", // no part of it either
].map((f) => f.toLowerCase());

function leaksIn(text: string): string[] {
  const t = text.toLowerCase();
  return FORMS.filter((f) => t.includes(f));
}

/** The user remote: `POST /users/<email>/refunds` and its lookup `GET /users/<email>/refunds?clientRef=`. */
interface UserRemote {
  url: string;
  posts: number;
  probes: number;
  /** How the next POSTs are answered. */
  postAnswer: "404" | "reset";
  close(): Promise<void>;
}

async function startUserRemote(): Promise<UserRemote> {
  const state = { posts: 0, probes: 0, postAnswer: "404" as UserRemote["postAnswer"] };
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const m = /^\/users\/([^/]+)\/refunds$/.exec(url.pathname);
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (!m) return json(404, { error: "no route" });
    const user = decodeURIComponent(m[1]!);
    if (req.method === "POST") {
      state.posts++;
      if (state.postAnswer === "reset") return req.socket.resetAndDestroy();
      // Echo the address as the remote saw it, lower-cased, decoded and as in the path.
      return json(404, { error: `no user ${user.toLowerCase()} (path ${url.pathname.toLowerCase()})` });
    }
    state.probes++;
    return json(503, { error: `lookup for ${user} unavailable` });
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => handle(req, res));
  });
  const { url, close } = await listenLoopback(server);
  return Object.assign(state, { url, close });
}

let remote: UserRemote;
let store: MemoryIntentStore;

beforeEach(async () => {
  remote = await startUserRemote();
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

const refundArgs = z.object({ email: z.string().email(), order_id: z.string(), amount: z.string() });

function executor(): Executor {
  const tool = defineTool({
    name: "refund_user",
    kind: "idempotent_by_key",
    args: refundArgs,
    identity: { order_id: canon.upper, amount: canon.decimal(2) },
    loggableFields: ["order_id"],
    timeoutMs: 500,
    invoke: async (args, ctx) => {
      const path = `/users/${encodeURIComponent(args.email)}/refunds`;
      try {
        return (await callHttp(ctx, { method: "POST", url: `${remote.url}${path}`, body: { order_id: args.order_id } }))
          .body;
      } catch (error) {
        // An SDK-style wrapper that echoes what it was asked and what the remote said.
        if (!isRejectedError(error)) throw error;
        throw new RejectedError(
          `refund of order ${args.order_id} for ${args.email} failed: ${error.message}; remote said ${JSON.stringify(error.body)}`,
          { httpStatus: error.httpStatus ?? 400, cause: error },
        );
      }
    },
    probe: async (args, ctx) => {
      const query = new URLSearchParams({ clientRef: ctx.clientRef, email: args.email, order_id: args.order_id });
      const url = `${remote.url}/users/${encodeURIComponent(args.email)}/refunds?${query}`;
      try {
        return ((await callHttp(ctx, { method: "GET", url })).body as unknown[])[0] ?? null;
      } catch (error) {
        const why = isAmbiguousError(error) || isRejectedError(error) ? error.message : String(error);
        throw new Error(`lookup GET ${url} for ${args.email} failed: ${why}`);
      }
    },
  });
  return createExecutor({ store, tools: [tool], probe: { spacingMs: 5, attempts: 3, timeoutMs: 500 } });
}

const refund = (ex: Executor) =>
  ex.call({ runId: "run-8", stepId: "refund", tool: "refund_user", args: ARGS, deadline: Deadline.after(5_000) });

describe("issue 9 §8: stored errors keep non-loggable argument values out", () => {
  it("404 on /users/{email}/refunds: record.error.message, events and envelope hold no form of the address; order_id (loggable) stays", async () => {
    const ex = executor();
    const env = await refund(ex);
    expect(env).toMatchObject({ status: "FAILED_NO_EFFECT", error: { httpStatus: 404 } });
    expect(remote.posts).toBe(1);
    const record = (await store.get(env.idempotency_key))!;
    const message = record.error?.message ?? "";
    // The message is useful: it still says what failed and where (the address replaced by its field name).
    expect(message).toContain(ORDER_ID);
    expect(message).toContain("/users/");
    expect(message).toContain("404");
    expect(message).toContain("{email}");
    expect(leaksIn(message)).toEqual([]);
    const events = await store.listEvents(env.idempotency_key);
    expect(events.length).toBeGreaterThan(0);
    expect(leaksIn(JSON.stringify(events.map((e) => e.data)))).toEqual([]);
    expect(leaksIn(JSON.stringify(env.error))).toEqual([]);
    expect(leaksIn(JSON.stringify(env))).toEqual([]);
    // The agent's own arguments are still on the record (they are needed to resend), not in its error.
    expect(record.args).toMatchObject({ email: EMAIL });
  });

  it("probes that fail echoing the URL (path and query): probe events, record and envelope hold no form of the address", async () => {
    const ex = executor();
    remote.postAnswer = "reset";
    const env = await refund(ex);
    expect(env).toMatchObject({ status: "UNKNOWN", retry_safe: false });
    expect(remote.probes).toBe(3);
    const events = await store.listEvents(env.idempotency_key);
    const failed = events.filter((e) => e.type === "probe" && e.data.answer === "failed");
    expect(failed).toHaveLength(3);
    for (const e of failed) {
      const text = String(e.data.error ?? "");
      expect(text).toContain("lookup GET");
      expect(text).toContain(ORDER_ID); // loggable: visible in the echoed query
      expect(text).toContain("503");
      expect(leaksIn(text)).toEqual([]);
    }
    expect(leaksIn(JSON.stringify(events.map((e) => e.data)))).toEqual([]);
    const record = (await store.get(env.idempotency_key))!;
    expect(leaksIn(record.error?.message ?? "")).toEqual([]);
    expect(leaksIn(JSON.stringify(env))).toEqual([]);

    // A later reconciliation (the sweeper's path) with the probes still failing stores nothing new either.
    await ex.reconcileKey(env.idempotency_key, Deadline.after(5_000), "sweeper");
    expect(leaksIn(JSON.stringify((await store.listEvents(env.idempotency_key)).map((e) => e.data)))).toEqual([]);
    expect(leaksIn((await store.get(env.idempotency_key))?.error?.message ?? "")).toEqual([]);
  });

  it("a compensation whose arguments cannot be built (the builder's error echoes the guest): the note on the record and its event hold no form of the address", async () => {
    const services = await startTripServices();
    try {
      const ex = createExecutor({
        store,
        tools: tripTools(services, {
          book_hotel: {
            loggableFields: ["hotel_id"],
            compensation: {
              tool: "cancel_hotel",
              args: (a: { guest_ref: string; hotel_id: string }) => {
                throw new Error(`cannot build the cancellation for guest ${a.guest_ref} at ${a.hotel_id}`);
              },
            },
          },
        }),
        probe: { spacingMs: 5, timeoutMs: 500 },
      });
      const booked = await ex.call({
        runId: "run-8c",
        stepId: "hotel",
        tool: "book_hotel",
        args: { hotel_id: "HOTEL-PORTO", guest_ref: EMAIL, check_in: "2026-07-01", nights: 2 },
        deadline: Deadline.after(5_000),
      });
      expect(booked.status).toBe("SUCCEEDED");
      const report = await ex.abortRun("run-8c", Deadline.after(5_000));
      expect(report.steps[0]).toMatchObject({ outcome: "compensation_failed" });
      const record = (await store.get(booked.idempotency_key))!;
      expect(record).toMatchObject({ needsHuman: true, error: { code: "COMPENSATION_FAILED" } });
      expect(record.error?.message).toContain("HOTEL-PORTO"); // loggable
      expect(leaksIn(record.error?.message ?? "")).toEqual([]);
      expect(leaksIn(JSON.stringify((await store.listEvents(booked.idempotency_key)).map((e) => e.data)))).toEqual([]);
    } finally {
      await services.close();
    }
  });
});
