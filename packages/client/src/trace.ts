/**
 * The W3C `traceparent` (and `tracestate`) of the caller's active OpenTelemetry span, so the
 * executor's span becomes its child. `@opentelemetry/api` is an optional peer dependency: without
 * it (or without an active span) no header is added.
 */

type OtelApi = typeof import("@opentelemetry/api");

let api: Promise<OtelApi | null> | undefined;

function loadApi(): Promise<OtelApi | null> {
  api ??= import("@opentelemetry/api").then(
    (m) => m,
    () => null,
  );
  return api;
}

/**
 * Trace headers for the active context: what the registered propagator injects, or, when no
 * propagator is registered but a span is active, a `traceparent` made from its span context
 * (`00-<trace id>-<span id>-<flags>`).
 * @returns lower-case header names to values; empty without OpenTelemetry or an active span.
 */
export async function traceHeaders(): Promise<Record<string, string>> {
  const otel = await loadApi();
  if (!otel) return {};
  const headers: Record<string, string> = {};
  otel.propagation.inject(otel.context.active(), headers);
  if (headers.traceparent) return headers;
  const span = otel.trace.getSpanContext(otel.context.active());
  if (!span || !otel.isSpanContextValid(span)) return headers;
  const flags = (span.traceFlags & 0xff).toString(16).padStart(2, "0");
  headers.traceparent = `00-${span.traceId}-${span.spanId}-${flags}`;
  return headers;
}
