import { SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { storedArgsForHooks } from "./call-input.ts";
import type { Clock } from "./clock.ts";
import type { ConfirmationVerifier } from "./confirmations.ts";
import type { Deadline } from "./deadline.ts";
import { buildEnvelope, type Envelope } from "./envelope.ts";
import { readPath } from "./idempotency-key.ts";
import type { IntentEvent, IntentEventType, IntentRecord, IntentStore } from "./intent-store.ts";
import type { JsonObject } from "./json.ts";
import type { AnyTool } from "./tool.ts";

/** Reconciliation probe settings. */
export interface ProbeOptions {
  /** Probe rounds before concluding "absent". @default 3 */
  attempts?: number;
  /** Spacing unit between rounds, ms: round i waits `min(i × spacingMs, remaining / 4)`. @default 1000 */
  spacingMs?: number;
  /** Timeout of one probe, ms (capped by the deadline). @default 5000 (source design: `timeout_for(5.0)`) */
  timeoutMs?: number;
}

/** Internal, shared by the executor's parts. Not exported from the package. */
export interface Runtime {
  store: IntentStore;
  /** The tenant of every record this executor writes (its store's): part of every key it derives. */
  tenant: string;
  tools: ReadonlyMap<string, AnyTool>;
  clock: Clock;
  tracer: Tracer;
  probe: Required<ProbeOptions>;
  /** Sweeps without evidence before a record goes to the human queue. */
  maxReconcileSweeps: number;
  /** Write outcomes durably even where a lost outcome would only cost a probe. */
  durableOutcomes: boolean;
  /** Answer SUCCEEDED before its (non-durable) outcome write lands. */
  backgroundOutcomes: boolean;
  /** Told when a background outcome write failed for good (the record stays PENDING for the sweeper). */
  onBackgroundWriteError?: (error: unknown, key: string) => void;
  /** Outcome writes still in the background, by key (settle, never reject). */
  pendingOutcomes: Map<string, Promise<unknown>>;
  /** Time kept back from every call's budget so the agent can still report, ms. */
  reserveMs: number;
  /** Least budget a call may start with after the reserve, ms. */
  minCallBudgetMs: number;
  /** First delay before the sweeper re-probes a record in the human queue, ms (doubles each time). */
  humanRecheckMs: number;
  /** Verifies confirmation tokens for tools with a confirmation policy; absent: every such call is refused. */
  confirmations: ConfirmationVerifier | undefined;
}

export const TRACER_NAME = "@tristate/core";

export function defaultTracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

/** The phrase naming an effect: the tool's `describe`, else its name and identity. */
export function effectPhrase(
  tool: AnyTool | undefined,
  toolName: string,
  args: unknown,
  identity: Record<string, string>,
): string {
  if (tool?.describe) {
    try {
      const phrase = tool.describe(args);
      if (typeof phrase === "string" && phrase.trim() !== "") return phrase;
    } catch {
      // describe is cosmetic; fall back below
    }
  }
  const parts = Object.entries(identity).map(([k, v]) => `${k}=${v}`);
  return parts.length ? `${toolName} (${parts.join(", ")})` : toolName;
}

export function envelopeFor(rt: Runtime, record: IntentRecord, replayed: boolean, actionTaken?: string): Envelope {
  const tool = rt.tools.get(record.tool);
  return buildEnvelope(record, {
    effectPhrase: effectPhrase(tool, record.tool, storedArgsForHooks(tool, record.args), record.identity),
    replayed,
    nowEpochMs: rt.clock.nowEpochMs(),
    ...(actionTaken ? { actionTaken } : {}),
  });
}

export function event(rt: Runtime, key: string, type: IntentEventType, data: JsonObject = {}): IntentEvent {
  return { key, type, atEpochMs: rt.clock.nowEpochMs(), data };
}

/** Only fields the tool marks loggable, for spans and events. */
export function loggableArgs(tool: AnyTool, args: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const field of tool.loggableFields ?? []) {
    const v = readPath(args, field);
    if (v !== undefined) out[field] = typeof v === "string" ? v : JSON.stringify(v);
  }
  return out;
}

/** Runs `fn` inside a child span; records exceptions; never lets tracing change the outcome. */
export async function inSpan<T>(
  rt: Runtime,
  name: string,
  attributes: Record<string, string | number | boolean>,
  fn: (setAttributes: (a: Record<string, string | number | boolean>) => void) => Promise<T>,
): Promise<T> {
  return rt.tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await fn((a) => span.setAttributes(a));
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** An AbortSignal that fires after `timeoutMs` (via the clock's timer) or when the deadline passes. */
export function timeoutSignal(timeoutMs: number): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, "TimeoutError")),
    Math.max(0, timeoutMs),
  );
  return { signal: controller.signal, dispose: () => clearTimeout(timer) };
}

export type { Deadline };
