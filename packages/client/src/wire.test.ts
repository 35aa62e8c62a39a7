import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { context, propagation, ROOT_CONTEXT, TraceFlags, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { afterEach, describe, expect, it } from "vitest";
import { createTristateClient } from "./client.ts";
import { NOT_SENT_ADVICE, TristateConflictError, TristateRateLimitedError, TristateTransportError } from "./errors.ts";

/** A loopback server answering each request with `handle`; records what it read. */
async function serve(handle: (req: IncomingMessage, res: ServerResponse, body: string) => void) {
  const seen: { method: string; url: string; headers: IncomingMessage["headers"]; body: string }[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => {
      body += c.toString();
    });
    req.on("end", () => {
      seen.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body });
      handle(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  servers.push(server);
  return { url, seen };
}
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  context.disable();
  propagation.disable();
});

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
const call = { runId: "r", stepId: "s", tool: "t", args: { a: 1 } };

describe("the wire format", () => {
  it("a mutation is a POST of the JSON input; a query a GET with ?input=; result.data comes back as is", async () => {
    const data = { status: "SUCCEEDED", retry_safe: true, extra_field_from_a_newer_server: [1, { x: null }] };
    const { url, seen } = await serve((_req, res) => json(res, 200, { result: { data } }));
    const client = createTristateClient({ url: `${url}/`, apiKey: "ts_agent_k" });
    expect(await client.execute({ ...call, deadlineEpochMs: 1_900_000_000_000 })).toEqual(data);
    await client.get("ab".repeat(16));
    expect(seen[0]).toMatchObject({ method: "POST", url: "/trpc/calls.execute" });
    expect(JSON.parse(seen[0]!.body)).toEqual({ ...call, deadlineEpochMs: 1_900_000_000_000 });
    expect(seen[0]!.headers).toMatchObject({ authorization: "Bearer ts_agent_k", "content-type": "application/json" });
    // A deadline years ahead (the executor refuses it with a 400) must not overflow the answer timer.
    expect(await client.execute({ ...call, deadlineEpochMs: Date.now() + 5 * 365 * 86_400_000 })).toEqual(data);
    expect(seen[1]).toMatchObject({
      method: "GET",
      url: `/trpc/calls.get?input=${encodeURIComponent(`{"key":"${"ab".repeat(16)}"}`)}`,
    });
  });

  it("the caller's signal: aborted before the call → FAILED_NO_EFFECT, nothing sent; aborted while waiting → UNKNOWN CANCELLED", async () => {
    const { url, seen } = await serve(() => {
      // never answers: the caller gives up
    });
    const client = createTristateClient({ url, apiKey: "ts_agent_k" });
    const before = await client.execute(call, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(before).toBeInstanceOf(TristateTransportError);
    expect(before).toMatchObject({
      outcome: "FAILED_NO_EFFECT",
      reason: "CANCELLED_BEFORE_SEND",
      advice: NOT_SENT_ADVICE,
    });
    expect(seen).toHaveLength(0);
    const controller = new AbortController();
    const pending = client.execute(call, { signal: controller.signal }).catch((e: unknown) => e);
    while (seen.length === 0) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    const during = await pending;
    expect(during).toMatchObject({ outcome: "UNKNOWN", reason: "CANCELLED", retrySafe: true });
    expect((during as Error).message).toMatch(/cancelled by the caller.*may have been delivered/);
    expect((during as TristateTransportError).advice.match(/repeat the same call/gi)).toHaveLength(1);
  });

  it("409 and 429 answers become typed errors with field, detail, retryAfterMs and the request id", async () => {
    let status = 409;
    const { url } = await serve((_req, res) =>
      json(
        res,
        status,
        {
          error: {
            message: "stale",
            code: -32603,
            data: {
              code: "CONFLICT",
              httpStatus: status,
              field: "expectedVersion",
              detail: { winner: "op" },
              ...(status === 409 ? { requestId: "req-409" } : {}),
            },
          },
        },
        status === 429 ? { "retry-after": "7", "x-request-id": "req-429" } : {},
      ),
    );
    const client = createTristateClient({ url, apiKey: "k" });
    const conflict = await client.execute(call).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(TristateConflictError);
    expect(conflict).toMatchObject({
      field: "expectedVersion",
      detail: { winner: "op" },
      code: "CONFLICT",
      requestId: "req-409",
    });
    status = 429;
    const limited = await client.tools().catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(TristateRateLimitedError);
    // Without data.requestId in the body, the answer's X-Request-Id header.
    expect(limited).toMatchObject({ retryAfterMs: 7000, requestId: "req-429" });
  });
});

describe("connection errors are classified into the outcomes", () => {
  it("connection refused: nothing was sent → FAILED_NO_EFFECT", async () => {
    const { url } = await serve(() => undefined);
    servers[0]!.close();
    await new Promise((r) => setTimeout(r, 20));
    const error = await createTristateClient({ url, apiKey: "k" })
      .execute(call)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TristateTransportError);
    expect(error).toMatchObject({
      outcome: "FAILED_NO_EFFECT",
      reason: "NOT_CONNECTED",
      retrySafe: true,
      advice: NOT_SENT_ADVICE,
    });
  });

  it("the request was read, then the connection reset → UNKNOWN, repeat the same call", async () => {
    const { url, seen } = await serve((req) => req.socket.resetAndDestroy());
    const error = await createTristateClient({ url, apiKey: "k" })
      .execute(call)
      .catch((e: unknown) => e);
    expect(seen).toHaveLength(1); // it reached the server
    expect(error).toMatchObject({ outcome: "UNKNOWN", reason: "NO_ANSWER", retrySafe: true });
    expect((error as TristateTransportError).advice).toContain(
      "repeat the same call: the executor replays or reconciles",
    );
  });

  it("no answer in time → UNKNOWN (TIMED_OUT); a 502 page or a 408 → UNKNOWN", async () => {
    const hang = await serve(() => undefined);
    const timedOut = await createTristateClient({ url: hang.url, apiKey: "k", timeoutMs: 150 })
      .tools()
      .catch((e: unknown) => e);
    expect(timedOut).toMatchObject({ outcome: "UNKNOWN", reason: "TIMED_OUT" });
    const bad = await serve((_req, res) =>
      res.writeHead(502, { "content-type": "text/html" }).end("<h1>Bad gateway</h1>"),
    );
    const gateway = await createTristateClient({ url: bad.url, apiKey: "k" })
      .execute(call)
      .catch((e: unknown) => e);
    expect(gateway).toMatchObject({ outcome: "UNKNOWN", reason: "SERVER_ERROR", httpStatus: 502 });
    expect((gateway as { requestId?: string }).requestId).toBeUndefined();
    const failing = await serve((_req, res) =>
      json(res, 500, { error: { message: "internal error" } }, { "x-request-id": "req-500" }),
    );
    const failed = await createTristateClient({ url: failing.url, apiKey: "k" })
      .execute(call)
      .catch((e: unknown) => e);
    expect(failed).toMatchObject({ reason: "SERVER_ERROR", httpStatus: 500, requestId: "req-500" });
    const slow = await serve((_req, res) => json(res, 408, { error: { message: "request timeout" } }));
    const late = await createTristateClient({ url: slow.url, apiKey: "k" })
      .execute(call)
      .catch((e: unknown) => e);
    expect(late).toMatchObject({ outcome: "UNKNOWN", reason: "REQUEST_TIMEOUT" });
  });
});

describe("trace context", () => {
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
  const spanId = "00f067aa0ba902b7";
  const active = () =>
    trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: TraceFlags.SAMPLED, isRemote: false });

  it("forwards the active span's W3C traceparent through the registered propagator", async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const { url, seen } = await serve((_req, res) => json(res, 200, { result: { data: [] } }));
    const client = createTristateClient({ url, apiKey: "k" });
    await context.with(active(), () => client.tools());
    await client.tools(); // no active span: no header
    expect(seen[0]!.headers.traceparent).toBe(`00-${traceId}-${spanId}-01`);
    expect(seen[1]!.headers.traceparent).toBeUndefined();
  });

  it("without a registered propagator, the traceparent is made from the active span context", async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const { url, seen } = await serve((_req, res) => json(res, 200, { result: { data: { rule: "r" } } }));
    await context.with(active(), () => createTristateClient({ url, apiKey: "k" }).promptRule());
    expect(seen[0]!.headers.traceparent).toBe(`00-${traceId}-${spanId}-01`);
  });
});
