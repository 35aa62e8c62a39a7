import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { FakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpTool } from "../src/catalog/http-tool.ts";
import { readEnv } from "../src/env.ts";
import { startTelemetry, tracesEndpoint } from "../src/telemetry.ts";
import { startStack, type TestStack } from "./support.ts";

type AnyValue = {
  stringValue?: string;
  intValue?: number | string;
  boolValue?: boolean;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
};
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: AnyValue }[];
}
/** A received span with its attributes decoded. */
interface Received {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attrs: Record<string, Decoded>;
  resource: Record<string, Decoded>;
}

type Decoded = string | number | boolean | undefined | Decoded[];
const decode = (v: AnyValue): Decoded =>
  v.arrayValue
    ? (v.arrayValue.values ?? []).map(decode)
    : (v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue);
const attrsOf = (list: { key: string; value: AnyValue }[] = []) =>
  Object.fromEntries(list.map((a) => [a.key, decode(a.value)]));

/** A real OTLP/HTTP receiver on loopback: POST /v1/traces with JSON bodies. */
async function startReceiver() {
  const spans: Received[] = [];
  const requests: { path: string; headers: IncomingHttpHeaders }[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      requests.push({ path: req.url ?? "", headers: req.headers });
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        resourceSpans?: {
          resource?: { attributes?: { key: string; value: AnyValue }[] };
          scopeSpans?: { spans?: OtlpSpan[] }[];
        }[];
      };
      for (const rs of body.resourceSpans ?? []) {
        const resource = attrsOf(rs.resource?.attributes);
        for (const ss of rs.scopeSpans ?? []) {
          for (const s of ss.spans ?? []) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? "",
              name: s.name,
              attrs: attrsOf(s.attributes),
              resource,
            });
          }
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const AGENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const AGENT_SPAN = "00f067aa0ba902b7";
const ARGS = { order_id: "ZX-99817", amount: 73.25, currency: "EUR", reason: "parcel arrived crushed" };

/** The declarative refund tool against the fake remote; `currency` is the one loggable field. */
const refundTool = (remote: FakeRemote) =>
  httpTool({
    name: "issue_refund",
    description: "Refund an order",
    kind: "idempotent_by_key",
    method: "POST",
    url: `${remote.url}/effects`,
    args: {
      type: "object",
      properties: {
        order_id: { type: "string" },
        amount: { type: "number" },
        currency: { type: "string" },
        reason: { type: "string" },
      },
      required: ["order_id", "amount", "currency"],
    },
    identity: { order_id: "upper", amount: "decimal:2" },
    timeoutMs: 2000,
    keyProbe: {
      url: `${remote.url}/effects?clientRef={key}`,
      found: { type: "non_empty_array" },
      // The fake remote's effects carry a state: "succeeded" is the effect (issue 21 §5).
      state: { field: "state", done: ["succeeded"], failed: ["failed"] },
    },
    loggableFields: ["currency"],
  });

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let stack: TestStack;
beforeAll(async () => {
  receiver = await startReceiver();
  stack = await startStack({
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: "tristate-test" },
    tools: (remote) => [refundTool(remote)],
  });
});
afterAll(async () => {
  await stack?.close();
  await receiver?.close();
});

async function spansOfTrace(traceId: string, atLeast: number): Promise<Received[]> {
  for (let i = 0; i < 100; i++) {
    const got = receiver.spans.filter((s) => s.traceId === traceId);
    if (got.length >= atLeast) return got;
    await new Promise((r) => setTimeout(r, 50));
  }
  return receiver.spans.filter((s) => s.traceId === traceId);
}

describe("OpenTelemetry spans over OTLP/HTTP", () => {
  it("the call's span reaches a real OTLP receiver as a child of the agent's span, with probes as child spans and no argument values", async () => {
    expect(stack.service.telemetry).toMatchObject({ enabled: true, endpoint: `${receiver.url}/v1/traces` });
    stack.remote.fault({ answer: 500 }); // committed, but the answer is a 500: UNKNOWN → probe → found
    const res = await stack.post(
      "calls.execute",
      { runId: "run-otel", stepId: "step-1", tool: "issue_refund", args: ARGS, budgetMs: 20_000 },
      undefined,
      { traceparent: `00-${AGENT_TRACE}-${AGENT_SPAN}-01` },
    );
    expect(res.status).toBe(200);
    const envelope = res.json.result.data;
    expect(envelope).toMatchObject({ status: "SUCCEEDED", resolution: "found" });
    await stack.service.telemetry.flush();

    const spans = await spansOfTrace(AGENT_TRACE, 4);
    const call = spans.find((s) => s.name === "execute_tool issue_refund");
    expect(call, `spans received: ${receiver.spans.map((s) => s.name).join(", ")}`).toBeDefined();
    expect(call!.parentSpanId).toBe(AGENT_SPAN);
    expect(call!.resource["service.name"]).toBe("tristate-test");
    expect(call!.attrs).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "issue_refund",
      "gen_ai.tool.description": "Refund an order",
      "tristate.idempotency_key": envelope.idempotency_key,
      "tristate.run_id": "run-otel",
      "tristate.step_id": "step-1",
      "tristate.attempt": 1,
      "tristate.outcome": "SUCCEEDED",
      "tristate.replayed": false,
      "tristate.resolution": "found",
      "tristate.arg.currency": "EUR",
    });

    // Child spans: the send, the reconciliation, its probe — all under the call's span.
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const under = (s: Received, ancestor: Received): boolean => {
      for (let p = byId.get(s.parentSpanId); p; p = byId.get(p.parentSpanId)) if (p === ancestor) return true;
      return false;
    };
    const invoke = spans.find((s) => s.name === "invoke issue_refund");
    const reconcile = spans.find((s) => s.name === "reconcile issue_refund");
    const probe = spans.find((s) => s.name === "probe issue_refund");
    expect(invoke?.parentSpanId).toBe(call!.spanId);
    expect(invoke?.attrs).toMatchObject({ "tristate.outcome": "UNKNOWN", "tristate.attempt": 1 });
    expect(reconcile?.parentSpanId).toBe(call!.spanId);
    expect(probe && under(probe, call!)).toBe(true);
    expect(probe?.parentSpanId).toBe(reconcile?.spanId);
    expect(probe?.attrs).toMatchObject({
      "tristate.idempotency_key": envelope.idempotency_key,
      "tristate.probe": "key",
      "tristate.probe.answer": "found",
    });

    // No argument value on any span, except the loggable currency.
    const values = receiver.spans.flatMap((s) => Object.values(s.attrs).map(String));
    for (const secret of ["ZX-99817", "zx-99817", "73.25", "parcel arrived crushed"]) {
      expect(values.filter((v) => v.includes(secret))).toEqual([]);
    }
    expect(Object.keys(call!.attrs).filter((k) => k.startsWith("tristate.arg."))).toEqual(["tristate.arg.currency"]);

    // The trace id stored on the intent record is the span's.
    const record = await stack.service.services.store.get(envelope.idempotency_key);
    expect(record?.traceId).toBe(AGENT_TRACE);
    expect(receiver.requests.every((r) => r.headers["content-type"] === "application/json")).toBe(true);
  });

  it("without a traceparent the call starts its own trace, and the record stores that trace id", async () => {
    const res = await stack.post("calls.execute", {
      runId: "run-otel",
      stepId: "step-2",
      tool: "issue_refund",
      args: { ...ARGS, order_id: "ZX-2" },
      budgetMs: 20_000,
    });
    const key = res.json.result.data.idempotency_key as string;
    await stack.service.telemetry.flush();
    const record = await stack.service.services.store.get(key);
    expect(record?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(record?.traceId).not.toBe(AGENT_TRACE);
    const call = (await spansOfTrace(record!.traceId!, 2)).find((s) => s.name.startsWith("execute_tool"));
    expect(call).toMatchObject({ name: "execute_tool issue_refund", parentSpanId: "" });
    expect(call!.attrs["tristate.idempotency_key"]).toBe(key);
  });
});

describe("the request id on spans", () => {
  it("every span a request starts carries its X-Request-Id (http.request.header.x-request-id)", async () => {
    const trace = "5cf92f3577b34da6a3ce929d0e0e4737";
    const res = await stack.post(
      "calls.execute",
      { runId: "run-otel", stepId: "step-rid", tool: "issue_refund", args: { ...ARGS, order_id: "ZX-3" } },
      undefined,
      { traceparent: `00-${trace}-${AGENT_SPAN}-01`, "x-request-id": "agent-turn-17/call-2" },
    );
    expect(res.headers.get("x-request-id")).toBe("agent-turn-17/call-2");
    await stack.service.telemetry.flush();
    const spans = await spansOfTrace(trace, 2);
    expect(spans.map((s) => s.name).sort()).toEqual(["execute_tool issue_refund", "invoke issue_refund"]);
    for (const span of spans) expect(span.attrs["http.request.header.x-request-id"]).toEqual(["agent-turn-17/call-2"]);
    // Another request's spans carry its own (generated) id.
    const other = await stack.post("calls.execute", {
      runId: "run-otel",
      stepId: "step-rid-2",
      tool: "issue_refund",
      args: { ...ARGS, order_id: "ZX-4" },
    });
    const generated = other.headers.get("x-request-id");
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);
    await stack.service.telemetry.flush();
    const record = await stack.service.services.store.get(other.json.result.data.idempotency_key);
    const call = (await spansOfTrace(record!.traceId!, 2)).find((s) => s.name.startsWith("execute_tool"));
    expect(call!.attrs["http.request.header.x-request-id"]).toEqual([generated]);
  });
});

describe("telemetry configuration", () => {
  it("is off without an endpoint (or with OTEL_SDK_DISABLED=true)", async () => {
    const off = startTelemetry(readEnv({}));
    expect(off).toMatchObject({ enabled: false, endpoint: null });
    await off.shutdown();
    expect(
      startTelemetry(readEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_SDK_DISABLED: "true" }))
        .enabled,
    ).toBe(false);
  });

  it("takes the traces endpoint as given, or appends v1/traces to the base endpoint", () => {
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://jaeger:4318" })).toBe("http://jaeger:4318/v1/traces");
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://tempo:4318/" })).toBe("http://tempo:4318/v1/traces");
    expect(
      tracesEndpoint({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://a:4318",
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://b:4318/custom/traces",
      }),
    ).toBe("http://b:4318/custom/traces");
    expect(tracesEndpoint({})).toBeNull();
  });
});
