/**
 * The executor's metrics (issue 23 §1; docs/metrics.md): the OpenTelemetry metrics SDK with a
 * MeterProvider owned by the service (never the global one: several services may share a process),
 * read by a Prometheus exporter that serves `GET /metrics` on the service's own HTTP server
 * (metrics/http.ts) and, when an OTLP endpoint is set, pushed over OTLP/HTTP.
 *
 * The series (names and labels are a contract, see docs/metrics.md): counters and the call-duration
 * histogram are counted by this replica (its calls, its writes); the gauges are read from the
 * database by one background refresher (metrics/gauges.ts) and are the same on every replica.
 */
export { createMetrics } from "./provider.ts";
export type { TristateMetrics } from "./types.ts";
