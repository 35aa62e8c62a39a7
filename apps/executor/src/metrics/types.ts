/** The metrics port the service counts with (metrics/index.ts describes the whole). */
import type { AnyTool, Outcome, Resolution } from "@tristate/core";
import type { TristateDatabase } from "@tristate/db";
import type { Env } from "../env.ts";
import type { Logger } from "../logger.ts";

/** A notification channel's kind, the `channel` label of `tristate_notifications_total`. */
export type NotificationChannelLabel = "webhook" | "slack" | "email";

/** How a compensating or corrective call ended, the `result` label of `tristate_compensations_total`. */
export type CompensationResult = "succeeded" | "failed";

/**
 * What the service counts with (`Services.metrics`). Every method is cheap and never throws; label
 * values must be bounded (tenants that exist, catalog tools).
 */
export interface TristateMetrics {
  /** `tristate_notifications_total{tenant,channel,result}` + 1: one delivery to a channel ended. */
  notificationDelivered(tenant: string, channel: NotificationChannelLabel, result: "delivered" | "failed"): void;
  /**
   * `tristate_calls_total{tenant,tool,outcome}` + 1 and `tristate_call_duration_seconds{tenant,tool}`
   * observes `durationMs` / 1000: a call was answered with `outcome` (the outcome first answered).
   */
  callAnswered(tenant: string, tool: string, outcome: Outcome, durationMs: number): void;
  /** `tristate_unknown_resolutions_total{tenant,tool,resolution}` + 1: an UNKNOWN got a resolution. */
  unknownResolved(tenant: string, tool: string, resolution: Resolution): void;
  /** `tristate_compensations_total{tenant,tool,result}` + 1: a compensating or corrective call settled. */
  compensationSettled(tenant: string, tool: string, result: CompensationResult): void;
  /**
   * The Prometheus text exposition (format 0.0.4) of every series, or only those whose `tenant`
   * label is `tenant` (tenant-scoped keys). Gauges come from the refresher's cache: no query here.
   */
  scrape(tenant: string | null): Promise<string>;
  /** Refreshes the database gauges now (also done every `TRISTATE_METRICS_REFRESH_MS`). Never rejects. */
  refresh(): Promise<void>;
  /** Stops the refresher and the readers (a last OTLP export). Idempotent; never rejects. */
  shutdown(): Promise<void>;
}

/** What `createMetrics` (provider.ts) reads. */
export interface MetricsOptions {
  env: Pick<
    Env,
    | "OTEL_EXPORTER_OTLP_ENDPOINT"
    | "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
    | "OTEL_METRIC_EXPORT_INTERVAL"
    | "OTEL_SDK_DISABLED"
    | "OTEL_SERVICE_NAME"
    | "TRISTATE_METRICS_REFRESH_MS"
  >;
  db: Pick<TristateDatabase, "reads">;
  /** The tenants that exist (the gauges' `tenant` values): `Tenants.list`. */
  tenants(): Promise<string[]>;
  /** The catalog (`tristate_tool_timeout_seconds` per tool). */
  tools: readonly AnyTool[];
  /** Wall clock, epoch ms (stale PENDING is judged against it, as `stats.attention` does). */
  now(): number;
  logger: Logger;
}
