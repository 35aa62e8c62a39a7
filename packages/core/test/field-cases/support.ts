/**
 * Shared helpers for the field-case regression tests (`/work/shared/cases/field-cases.md`).
 *
 * Time: every case states exact times in seconds. Each test file picks one constant scale `S`
 * (milliseconds of real time per case-second) and builds all its times with it, including the
 * executor's probe spacing, reserve and minimum call budget ({@link scaledOptions}).
 */
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Canonicaliser } from "../../src/canon.ts";
import type { Clock } from "../../src/clock.ts";
import { systemClock } from "../../src/clock.ts";
import { Deadline } from "../../src/deadline.ts";
import { isAmbiguousError, isNotSentError, isRejectedError } from "../../src/errors.ts";
import type { CallInput, ExecutorOptions } from "../../src/executor.ts";
import { callHttp, type HttpCallContext, type HttpRequest, type HttpResponse } from "../../src/http.ts";
import type { IntentStore, StoredIntentEvent } from "../../src/intent-store.ts";
import { type AnyTool, defineTool } from "../../src/tool.ts";

/**
 * Executor options with every time scaled by `S` ms per case-second: probes spaced 1 s (the
 * executor probes at +0, +1 and +3 spacing units after reconciliation starts), a probe timeout of
 * 5 s (at least 500 ms of real time, for loopback under load), a 0.5 s reserve and a 0.1 s minimum
 * call budget.
 */
export function scaledOptions(
  S: number,
  over: { reserveS?: number; minBudgetS?: number } = {},
): Pick<ExecutorOptions, "probe" | "reserveMs" | "minCallBudgetMs"> {
  return {
    probe: { spacingMs: S, timeoutMs: Math.max(5 * S, 500), attempts: 3 },
    reserveMs: (over.reserveS ?? 0.5) * S,
    minCallBudgetMs: (over.minBudgetS ?? 0.1) * S,
  };
}

/** Resolves after `ms` of real time. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `predicate` every 2 ms until it holds; throws after `timeoutMs`. */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const start = performance.now();
  while (!(await predicate())) {
    if (performance.now() - start > timeoutMs) throw new Error("waitFor: condition not met in time");
    await sleep(2);
  }
}

/** A promise that never settles: a process that died mid-call never resumes. */
export function never<T>(): Promise<T> {
  return new Promise<T>(() => {});
}

/**
 * A real-time clock whose wall clock and monotonic time can both jump forward ("6 minutes later",
 * "25 h later") while timers, sockets and sleeps stay real.
 */
export class JumpClock implements Clock {
  #offsetMs = 0;
  nowEpochMs(): number {
    return Date.now() + this.#offsetMs;
  }
  monotonicMs(): number {
    return performance.now() + this.#offsetMs;
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return systemClock.sleep(ms, signal);
  }
  /** Moves both clocks forward by `ms`. */
  jump(ms: number): void {
    this.#offsetMs += ms;
  }
}

/** A test's timeline: `t()` is case-seconds since `start()`, `until(s)` sleeps to case-second `s`. */
export class Timeline {
  #t0 = performance.now();
  constructor(readonly S: number) {}
  start(): void {
    this.#t0 = performance.now();
  }
  /** Case-seconds since start. */
  t(): number {
    return (performance.now() - this.#t0) / this.S;
  }
  /** Sleeps until case-second `s` (at once if already past). */
  async until(s: number): Promise<void> {
    const wait = s * this.S - (performance.now() - this.#t0);
    if (wait > 0) await sleep(wait);
  }
  /** A deadline `s` case-seconds from now. */
  deadline(s: number, clock: Clock = systemClock): Deadline {
    return Deadline.after(s * this.S, clock);
  }
}

/** Builds a call input; `meta` (tool-call id, workflow attempt, worker id) is carried but is no key input. */
export function input(
  fields: Omit<CallInput, "deadline"> & { deadline: Deadline; meta?: Record<string, unknown> },
): CallInput {
  return fields;
}

/** The record's timeline events of one type. */
export async function eventsOf(store: IntentStore, key: string, type?: string): Promise<StoredIntentEvent[]> {
  const all = await store.listEvents(key);
  return type ? all.filter((e) => e.type === type) : all;
}

/** A minimal per-case HTTP server on 127.0.0.1: the handler gets the request with its body read. */
export interface CaseServer {
  url: string;
  /** Requests read completely, in order. */
  seen: { method: string; url: string; body: string; headers: IncomingMessage["headers"] }[];
  close(): Promise<void>;
}

export async function startCaseServer(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
): Promise<CaseServer> {
  const sockets = new Set<Socket>();
  const seen: CaseServer["seen"] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      seen.push({ method: req.method ?? "", url: req.url ?? "/", body, headers: req.headers });
      handler(req, res, body);
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A GET probe against the fake remote's key lookup (`GET /effects?clientRef=<key>`): the first
 * match, or null.
 */
export async function probeByClientRef(url: string, ctx: HttpCallContext & { clientRef: string }): Promise<unknown> {
  const res = await callHttp(ctx, {
    method: "GET",
    url: `${url}/effects?clientRef=${encodeURIComponent(ctx.clientRef)}`,
  });
  return (res.body as unknown[])[0] ?? null;
}

/** The part of an invoke/probe context a transport needs, without the `Idempotency-Key` header (remotes without key support). */
export function withoutKeyHeader(ctx: HttpCallContext): HttpCallContext {
  return {
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    ...(ctx.timeoutMs !== undefined ? { timeoutMs: ctx.timeoutMs } : {}),
    ...(ctx.deadline ? { deadline: ctx.deadline } : {}),
  };
}

/**
 * An `unsafe` tool against a fake remote that ignores `Idempotency-Key`: the key travels as the
 * body's `clientRef`, and the key probe looks it up (`GET /effects?clientRef=`). The shape several
 * field cases share (T05, T06, T21, T29).
 */
export function clientRefTool(
  remoteUrl: string,
  spec: { name: string; identity: Record<string, Canonicaliser>; timeoutMs: number; noEffectStatuses?: number[] },
): AnyTool {
  return defineTool({
    name: spec.name,
    kind: "unsafe",
    identity: spec.identity,
    timeoutMs: spec.timeoutMs,
    invoke: async (args, ctx) =>
      (
        await callHttp(withoutKeyHeader(ctx), {
          method: "POST",
          url: `${remoteUrl}/effects`,
          body: { ...args, clientRef: ctx.idempotencyKey },
          ...(spec.noEffectStatuses ? { noEffectStatuses: spec.noEffectStatuses } : {}),
        })
      ).body,
    probe: (_args, ctx) => probeByClientRef(remoteUrl, ctx),
  });
}

/** Options of {@link sdkClient}. */
export interface SdkOptions {
  /** Retries after the first attempt (generated SDKs default to 2: three attempts). */
  maxRetries: number;
  /** The SDK's own read timeout per attempt, ms. */
  perAttemptTimeoutMs?: number;
  /**
   * stripe-php before 6.34.2: with retries on, the SDK looks for the caller's `Idempotency-Key`
   * in a header list it has already flattened, never finds it, and sets a fresh UUID key instead.
   */
  regeneratesKey?: boolean;
}

/**
 * An SDK-style client with its own retries (field cases T03, T11), built on `callHttp` for each
 * attempt. It retries on read timeouts, resets, 429, 5xx and connection errors, like the generated
 * clients in the cases, unless a request says `maxRetries: 0`. `attempts` counts attempts started.
 */
export function sdkClient(defaults: SdkOptions) {
  const client = {
    attempts: 0,
    async post(
      ctx: HttpCallContext,
      request: HttpRequest,
      options: { maxRetries?: number } = {},
    ): Promise<HttpResponse> {
      const maxRetries = options.maxRetries ?? defaults.maxRetries;
      for (let retry = 0; ; retry++) {
        client.attempts++;
        const headers = { ...request.headers };
        if (defaults.regeneratesKey && maxRetries > 0 && headers["Idempotency-Key"] === undefined) {
          headers["Idempotency-Key"] = randomUUID();
        }
        const attemptCtx: HttpCallContext = { ...ctx };
        if (defaults.perAttemptTimeoutMs !== undefined) attemptCtx.timeoutMs = defaults.perAttemptTimeoutMs;
        try {
          return await callHttp(attemptCtx, { ...request, headers });
        } catch (error) {
          if (retry >= maxRetries || !sdkRetries(error)) throw error;
        }
      }
    },
  };
  return client;
}

function sdkRetries(error: unknown): boolean {
  if (isAmbiguousError(error))
    return (
      error.code === "READ_TIMEOUT" ||
      error.code === "RESET_AFTER_WRITE" ||
      error.code === "GATEWAY_5XX" ||
      (error.httpStatus ?? 0) >= 500
    );
  if (isRejectedError(error)) return error.httpStatus === 429;
  if (isNotSentError(error)) return error.code === "NOT_SENT";
  return false;
}
