// The metrics profile's checks for scripts/check-compose.mjs (issue 23 §2): Prometheus scrapes the
// executor's /metrics with the executor's TRISTATE_METRICS_TOKEN and loads the shipped rules, Grafana has
// Prometheus as a data source and the Tristate dashboard provisioned, and the dashboard's queries name only
// the series the executor exports (docs/metrics.md). No dependency: runs before anything is installed.
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseYamlSubset } from "./yaml-subset.mjs";

/** The series the executor exports (issue 23 §1; names are a contract), histogram parts included. */
export const EXPORTED_SERIES = new Set([
  "tristate_calls_total",
  "tristate_unknown_resolutions_total",
  "tristate_human_queue_records",
  "tristate_human_queue_oldest_age_seconds",
  "tristate_stale_pending_records",
  "tristate_compensations_total",
  "tristate_call_duration_seconds_bucket",
  "tristate_call_duration_seconds_sum",
  "tristate_call_duration_seconds_count",
  "tristate_tool_timeout_seconds",
  "tristate_notifications_total",
]);

/** The dashboard's data source: its `datasource` variable, so it works on any Grafana's Prometheus. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a JS template
const DATASOURCE_VARIABLE = "${datasource}";

/** The job name the alert TristateExecutorDown watches (`up{job="tristate-executor"}`). */
const EXECUTOR_JOB = "tristate-executor";

/** Series names (`tristate_…`) a PromQL text reads; recorded names (`a:tristate_b:c`) aside. */
export function seriesOf(promql) {
  return [...promql.matchAll(/(?<![:\w])tristate_[a-z0-9_]+/g)].map((m) => m[0]);
}

/** `"./a:/b:ro"` → { source: "./a", target: "/b" }. */
function mountOf(volume) {
  const [source = "", target = ""] = String(volume).split(":");
  return { source, target };
}

/**
 * The repository path a container path of `service` comes from (a file mount, or a file under a mounted
 * folder), or null when no bind mount of the repository holds it.
 */
function hostPath(root, service, containerPath) {
  for (const { source, target } of (service.volumes ?? []).map(mountOf)) {
    if (!source.startsWith(".")) continue;
    if (containerPath === target) return join(root, source);
    if (containerPath.startsWith(`${target}/`)) return join(root, source, containerPath.slice(target.length + 1));
  }
  return null;
}

/** A YAML file of the subset, or null (with a problem) when absent or outside the subset. */
function readYaml(file, check, label) {
  if (!file || !existsSync(file)) {
    check(false, `${label} is not mounted from a file of the repository`);
    return null;
  }
  try {
    return parseYamlSubset(readFileSync(file, "utf8"));
  } catch (error) {
    check(false, `${label} (${file}) does not parse: ${error.message}`);
    return null;
  }
}

/** Prometheus: config mounted, rules mounted and present, the executor scraped with its token. */
function checkPrometheus(root, services, check) {
  const prometheus = services.prometheus;
  const command = [prometheus.entrypoint ?? [], prometheus.command ?? []].flat().map(String).join(" ");
  const configPath = /--config\.file=(\S+)/.exec(command)?.[1] ?? "/etc/prometheus/prometheus.yml";
  const config = readYaml(hostPath(root, prometheus, configPath), check, `Prometheus' ${configPath}`);
  if (!config) return;
  for (const rules of config.rule_files ?? []) {
    const file = hostPath(root, prometheus, rules);
    check(Boolean(file && existsSync(file)), `Prometheus' rule file ${rules} is not a mounted file of the repository`);
  }
  check(
    (config.rule_files ?? []).some((r) => r.endsWith("/tristate-alerts.yml")),
    "Prometheus does not load tristate-alerts.yml",
  );
  const job = (config.scrape_configs ?? []).find((j) => j.job_name === EXECUTOR_JOB);
  check(Boolean(job), `Prometheus has no scrape job "${EXECUTOR_JOB}" (the alert TristateExecutorDown watches it)`);
  if (!job) return;
  const executorPort = Number(services.executor?.environment?.PORT ?? 4100);
  const targets = (job.static_configs ?? []).flatMap((c) => c.targets ?? []);
  check(
    targets.includes(`executor:${executorPort}`),
    `Prometheus scrapes ${targets.join(", ") || "nothing"}, not executor:${executorPort}`,
  );
  check((job.metrics_path ?? "/metrics") === "/metrics", `Prometheus scrapes ${job.metrics_path}, not /metrics`);
  const credentials = job.authorization?.credentials_file;
  check(job.authorization?.type === "Bearer" && Boolean(credentials), "Prometheus sends no bearer token from a file");
  const written = /printf %s "\$TRISTATE_METRICS_TOKEN" > (\S+)/.exec(command)?.[1];
  check(
    Boolean(credentials) && written === credentials,
    `Prometheus' token file ${credentials} is not the one its command writes TRISTATE_METRICS_TOKEN to (${written})`,
  );
  const token = services.executor?.environment?.TRISTATE_METRICS_TOKEN ?? "";
  check(token.length > 0, "the executor has no TRISTATE_METRICS_TOKEN");
  check(
    prometheus.environment?.TRISTATE_METRICS_TOKEN === token,
    "Prometheus' TRISTATE_METRICS_TOKEN is not the executor's",
  );
  const deps = Object.keys(prometheus.depends_on ?? {});
  check(deps.includes("executor"), "Prometheus does not depend on the executor");
}

/** Grafana: Prometheus as a data source, the dashboard provider and the Tristate dashboard. */
function checkGrafana(root, services, check) {
  const grafana = services.grafana;
  const mounts = (grafana.volumes ?? []).map(mountOf);
  const datasources = mounts.find((m) => m.target.includes("/provisioning/datasources/"));
  const file = datasources ? readYaml(join(root, datasources.source), check, "Grafana's data sources") : null;
  const prometheus = (file?.datasources ?? []).find((d) => d.type === "prometheus");
  check(
    prometheus?.url === "http://prometheus:9090" && prometheus?.uid === "prometheus",
    "Grafana has no Prometheus data source (uid prometheus) at http://prometheus:9090",
  );
  const providers = mounts.find((m) => m.target.includes("/provisioning/dashboards/"));
  const provider = providers ? readYaml(join(root, providers.source), check, "Grafana's dashboard provider") : null;
  const path = provider?.providers?.[0]?.options?.path;
  const dir = path ? hostPath(root, grafana, path) : null;
  check(
    Boolean(dir && existsSync(dir) && statSync(dir).isDirectory()),
    `Grafana's dashboard folder ${path} is not a mounted folder of the repository`,
  );
  const dashboardFile = dir ? join(dir, "tristate.json") : null;
  if (!dashboardFile || !existsSync(dashboardFile)) {
    check(false, "Grafana's dashboard folder has no tristate.json");
    return;
  }
  checkDashboard(JSON.parse(readFileSync(dashboardFile, "utf8")), check);
}

/** The dashboard: uid `tristate` (the alerts link /d/tristate), queries on the exported series only. */
function checkDashboard(dashboard, check) {
  check(dashboard.uid === "tristate", `the dashboard's uid is ${dashboard.uid}, not tristate (the alerts link it)`);
  const panels = (dashboard.panels ?? []).filter((p) => p.type !== "row");
  check(panels.length > 0, "the dashboard has no panels");
  for (const panel of panels) {
    const exprs = (panel.targets ?? []).map((t) => t.expr ?? "");
    check(exprs.length > 0 && exprs.every(Boolean), `the dashboard's panel "${panel.title}" has no query`);
    check(
      panel.datasource?.uid === DATASOURCE_VARIABLE,
      `the panel "${panel.title}" does not use the datasource variable`,
    );
    for (const name of exprs.flatMap(seriesOf)) {
      check(EXPORTED_SERIES.has(name), `the panel "${panel.title}" reads ${name}, which the executor does not export`);
    }
  }
}

/**
 * Checks the metrics services that start in one setup (`services`: resolved, profiles applied);
 * `check(ok, message)` records a problem. A setup without Prometheus checks nothing here.
 */
export function checkMetricsServices(root, services, check) {
  if (!services.prometheus) return;
  checkPrometheus(root, services, check);
  check(Boolean(services.grafana), "Prometheus starts without Grafana");
  if (services.grafana) checkGrafana(root, services, check);
}
