/**
 * Tracing for the executor's parts: the tracer it uses when given none, child spans that never change
 * an outcome, and the argument fields a tool allows in spans and events.
 */
import { SpanStatusCode, type Tracer, trace } from "@opentelemetry/api";
import { readPath } from "./idempotency-key.ts";
import type { Runtime } from "./runtime.ts";
import type { AnyTool } from "./tool.ts";

/** The instrumentation scope name of the executor's spans. */
export const TRACER_NAME = "@tristate/core";

/** The global OpenTelemetry tracer under {@link TRACER_NAME} (a no-op until an SDK is registered). */
export function defaultTracer(): Tracer {
  return trace.getTracer(TRACER_NAME);
}

/**
 * Only the argument fields the tool marks loggable (`loggableFields`, dot paths), for spans and events:
 * strings as they are, other values as JSON; absent fields are left out.
 */
export function loggableArgs(tool: AnyTool, args: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const field of tool.loggableFields ?? []) {
    const v = readPath(args, field);
    if (v !== undefined) out[field] = typeof v === "string" ? v : JSON.stringify(v);
  }
  return out;
}

/**
 * Runs `fn` inside a child span of the active one; records exceptions; never lets tracing change the
 * outcome (the span ends whatever `fn` does).
 * @throws whatever `fn` throws, after recording it on the span.
 */
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
