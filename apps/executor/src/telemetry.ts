/**
 * OpenTelemetry tracing of the service: `@opentelemetry/sdk-node` exporting spans with
 * `@opentelemetry/exporter-trace-otlp-http` (OTLP over HTTP, JSON encoding). Configured by the
 * standard variables (read in env.ts): `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the full URL, e.g.
 * `http://127.0.0.1:4318/v1/traces`) or `OTEL_EXPORTER_OTLP_ENDPOINT` (the base; `/v1/traces` is
 * appended), `OTEL_SERVICE_NAME`, `OTEL_SDK_DISABLED`; `OTEL_EXPORTER_OTLP_HEADERS`,
 * `OTEL_RESOURCE_ATTRIBUTES` and `OTEL_BSP_*` are read by the SDK itself. Off when no endpoint is set.
 *
 * Registers the W3C trace-context (and baggage) propagator and the AsyncLocalStorage context
 * manager, so a procedure run inside `propagation.extract(traceparent)` makes the executor's
 * `execute_tool <tool>` span a child of the agent's span.
 */
import { context, diag, propagation, trace } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { core, NodeSDK } from "@opentelemetry/sdk-node";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import type { Env } from "./env.ts";
import type { Logger } from "./logger.ts";
import { RequestIdSpanProcessor } from "./request-id.ts";

/** Tracing as started by {@link startTelemetry}. */
export interface Telemetry {
  /** True when spans are exported. */
  readonly enabled: boolean;
  /** Where spans go (the OTLP/HTTP traces URL), or null when off. */
  readonly endpoint: string | null;
  /** Exports the spans still buffered. */
  flush(): Promise<void>;
  /** Flushes and stops the SDK, and unregisters it from the OpenTelemetry API. Idempotent. */
  shutdown(): Promise<void>;
}

const OFF: Telemetry = {
  enabled: false,
  endpoint: null,
  flush: async () => {},
  shutdown: async () => {},
};

/**
 * The OTLP/HTTP traces URL from the standard variables: the signal-specific endpoint as given, else
 * the base endpoint with `v1/traces` appended; null when neither is set.
 */
export function tracesEndpoint(env: Pick<Env, "OTEL_EXPORTER_OTLP_ENDPOINT" | "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT">) {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT) return null;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return `${base}${base.endsWith("/") ? "" : "/"}v1/traces`;
}

/**
 * Starts tracing when an OTLP endpoint is configured (before the executor is created, so the
 * core's tracer is the SDK's). One SDK per process: call `shutdown()` before starting another.
 */
export function startTelemetry(env: Env, logger?: Logger): Telemetry {
  const url = tracesEndpoint(env);
  if (!url || env.OTEL_SDK_DISABLED) return OFF;
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (protocol && protocol !== "http/json") {
    logger?.warn({ protocol }, "traces are sent as OTLP/HTTP with JSON encoding; the protocol setting is ignored");
  }
  const exporter = new OTLPTraceExporter({ url });
  const processor = new BatchSpanProcessor(exporter);
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({
      [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME,
      [ATTR_SERVICE_VERSION]: "0.1.0",
    }),
    serviceName: env.OTEL_SERVICE_NAME,
    // The request id goes on every span a request starts (request-id.ts), before export.
    spanProcessors: [new RequestIdSpanProcessor(), processor],
    // W3C trace context (`traceparent`/`tracestate`) and baggage, whatever OTEL_PROPAGATORS says.
    textMapPropagator: new core.CompositePropagator({
      propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()],
    }),
    // contextManager left undefined: the SDK registers its AsyncLocalStorageContextManager.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  logger?.info({ endpoint: url, serviceName: env.OTEL_SERVICE_NAME }, "tracing: exporting spans over OTLP/HTTP");
  let stopping: Promise<void> | null = null;
  return {
    enabled: true,
    endpoint: url,
    flush: () => processor.forceFlush(),
    shutdown() {
      stopping ??= (async () => {
        try {
          await sdk.shutdown();
        } catch (error) {
          logger?.warn({ err: error }, "tracing: flushing spans at shutdown failed");
        } finally {
          trace.disable();
          propagation.disable();
          context.disable();
          diag.disable();
        }
      })();
      return stopping;
    },
  };
}
