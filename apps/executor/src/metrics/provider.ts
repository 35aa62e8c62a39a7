import type { Attributes } from "@opentelemetry/api";
import { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  type IMetricReader,
  MeterProvider,
  PeriodicExportingMetricReader,
  type ResourceMetrics,
} from "@opentelemetry/sdk-metrics";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import { OUTCOMES } from "@tristate/core";
import type { Env } from "../env.ts";
import { startGaugeRefresher } from "./gauges.ts";
import type { MetricsOptions, TristateMetrics } from "./types.ts";

/** Buckets of `tristate_call_duration_seconds`, s: from 5 ms to 2 min (the longest default budget). */
const DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/**
 * The OTLP/HTTP metrics URL from the standard variables: `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` as
 * given, else `OTEL_EXPORTER_OTLP_ENDPOINT` with `v1/metrics` appended; null when neither is set
 * (as telemetry.ts's `tracesEndpoint` does for spans).
 */
export function metricsEndpoint(
  env: Pick<Env, "OTEL_EXPORTER_OTLP_ENDPOINT" | "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT">,
): string | null {
  if (env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT) return env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT;
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT) return null;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return `${base}${base.endsWith("/") ? "" : "/"}v1/metrics`;
}

/**
 * Creates the service's metrics: its own MeterProvider (not registered globally), the Prometheus
 * reader (`preventServerStart`: `/metrics` is served by the executor's server), the OTLP/HTTP reader
 * when an endpoint is set (and `OTEL_SDK_DISABLED` is not), the instruments, and the gauge refresher
 * (started here, every `TRISTATE_METRICS_REFRESH_MS`).
 */
export function createMetrics(options: MetricsOptions): TristateMetrics {
  const { env, logger } = options;
  const prometheus = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true });
  const readers: IMetricReader[] = [prometheus];
  const otlpUrl = env.OTEL_SDK_DISABLED ? null : metricsEndpoint(env);
  if (otlpUrl) {
    readers.push(
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({ url: otlpUrl }),
        exportIntervalMillis: env.OTEL_METRIC_EXPORT_INTERVAL,
        exportTimeoutMillis: Math.min(30_000, env.OTEL_METRIC_EXPORT_INTERVAL),
      }),
    );
    logger.info({ endpoint: otlpUrl }, "metrics: exporting over OTLP/HTTP");
  }
  const provider = new MeterProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME, [ATTR_SERVICE_VERSION]: "0.1.0" }),
    readers,
  });
  const meter = provider.getMeter("tristate-executor", "0.1.0");
  const calls = meter.createCounter("tristate_calls", {
    description: "Calls answered, by the outcome first answered (SUCCEEDED, FAILED_NO_EFFECT, UNKNOWN)",
  });
  const duration = meter.createHistogram("tristate_call_duration_seconds", {
    description: "How long calls took to answer, seconds",
    unit: "s",
    advice: { explicitBucketBoundaries: DURATION_BUCKETS_S },
  });
  const resolutions = meter.createCounter("tristate_unknown_resolutions", {
    description: "UNKNOWN records that got a resolution (needs_human: handed to a person)",
  });
  const compensations = meter.createCounter("tristate_compensations", {
    description: "Compensating or corrective calls settled, by result (succeeded, failed)",
  });
  const notifications = meter.createCounter("tristate_notifications", {
    description: "Notification deliveries, by channel kind and result (delivered, failed)",
  });
  const gauges = startGaugeRefresher(meter, options);
  const serializer = new PrometheusSerializer(undefined, false, undefined, false, true);
  const count = (counter: { add(n: number, a: Attributes): void }, attributes: Attributes, n = 1) => {
    try {
      counter.add(n, attributes);
    } catch (error) {
      logger.warn({ err: error }, "metrics: counting failed");
    }
  };
  let stopping: Promise<void> | null = null;
  return {
    notificationDelivered: (tenant, channel, result) => count(notifications, { tenant, channel, result }),
    callAnswered(tenant, tool, outcome, durationMs) {
      // Every outcome's series from the tool's first call (at 0): `increase()` then sees the first UNKNOWN.
      for (const o of OUTCOMES) count(calls, { tenant, tool, outcome: o }, o === outcome ? 1 : 0);
      duration.record(Math.max(0, durationMs) / 1000, { tenant, tool });
    },
    unknownResolved: (tenant, tool, resolution) => count(resolutions, { tenant, tool, resolution }),
    compensationSettled: (tenant, tool, result) => count(compensations, { tenant, tool, result }),
    async scrape(tenant) {
      const { resourceMetrics, errors } = await prometheus.collect();
      if (errors.length) logger.warn({ errors: errors.map(String) }, "metrics: collection errors");
      return serializer.serialize(tenant === null ? resourceMetrics : onlyTenant(resourceMetrics, tenant));
    },
    refresh: () => gauges.refresh(),
    shutdown() {
      stopping ??= (async () => {
        gauges.stop();
        try {
          await provider.shutdown();
        } catch (error) {
          logger.warn({ err: error }, "metrics: shutting the readers down failed");
        }
      })();
      return stopping;
    },
  };
}

/** The collected metrics with only the data points whose `tenant` attribute is `tenant`. */
function onlyTenant(collected: ResourceMetrics, tenant: string): ResourceMetrics {
  return {
    resource: collected.resource,
    scopeMetrics: collected.scopeMetrics.map((scope) => ({
      ...scope,
      metrics: scope.metrics.map(
        (metric) =>
          ({
            ...metric,
            dataPoints: (metric.dataPoints as { attributes: Attributes }[]).filter(
              (p) => p.attributes.tenant === tenant,
            ),
          }) as typeof metric,
      ),
    })),
  };
}
