#!/usr/bin/env node
// `node scripts/check-compose.mjs` (part of `npm test`): checks docker-compose.yml as `docker compose
// config` would resolve it, for every documented way to start it — no Docker engine needed:
//   default:  `docker compose up`                                   (Jaeger)
//   tempo:    `TRISTATE_TRACES=tempo docker compose --profile tempo up` (Tempo + Grafana)
//   metrics:  `docker compose --profile metrics up`                 (Prometheus + Grafana)
//   both:     `TRISTATE_TRACES=tempo docker compose --profile tempo --profile metrics up`
// For each: the services that start (profiles), `${VAR:-default}` interpolation, that every host
// port is unique and clashes with no local service (PostgreSQL's 5432, the dashboard's 3000), that
// the executor's API (4100) and the dashboard are published, that traces go to a collector that runs
// in that profile and listens for OTLP/HTTP, that Grafana has Tempo as a data source, that
// depends_on names services that start (unless `required: false`), and that every bind-mounted file
// exists; with Prometheus (scripts/compose/metrics-checks.mjs): it scrapes the executor's /metrics with the
// executor's TRISTATE_METRICS_TOKEN and loads the shipped rules, and Grafana has it as a data source with
// the Tristate dashboard, whose queries read only series the executor exports.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkMetricsServices } from "./compose/metrics-checks.mjs";
import { parseYamlSubset } from "./compose/yaml-subset.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const compose = parseYamlSubset(readFileSync(join(root, "docker-compose.yml"), "utf8"));
const problems = [];
const check = (ok, message) => {
  if (!ok) problems.push(message);
};

/** Compose's interpolation: `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `$$`. */
function interpolate(value, vars) {
  if (typeof value !== "string") return value;
  return value
    .replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}/g, (_, name, op, fallback) => {
      const v = vars[name];
      if (op === ":-") return v ? v : (fallback ?? "");
      if (op === "-") return v === undefined ? (fallback ?? "") : v;
      return v ?? "";
    })
    .replaceAll("$$", "$");
}

function resolve(node, vars) {
  if (Array.isArray(node)) return node.map((n) => resolve(n, vars));
  if (node && typeof node === "object")
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, resolve(v, vars)]));
  return interpolate(node, vars);
}

/** `"15432:5432"`, `"127.0.0.1:3001:3000"` → { host, container }. */
function parsePort(spec) {
  const parts = String(spec).split(":");
  return { host: Number(parts.at(-2)), container: Number(parts.at(-1)) };
}

const LOCAL_PORTS = {
  5432: "a local PostgreSQL",
  3000: "the dashboard's `pnpm --filter @tristate/web start` and `pnpm demo`",
  9090: "Debian's prometheus service (its package gives npm test promtool)",
};

const setups = [
  { name: "default (docker compose up)", profiles: [], vars: {}, collector: "jaeger" },
  {
    name: "tempo (TRISTATE_TRACES=tempo docker compose --profile tempo up)",
    profiles: ["tempo"],
    vars: { TRISTATE_TRACES: "tempo" },
    collector: "tempo",
  },
  { name: "metrics (docker compose --profile metrics up)", profiles: ["metrics"], vars: {}, collector: "jaeger" },
  {
    name: "both (TRISTATE_TRACES=tempo docker compose --profile tempo --profile metrics up)",
    profiles: ["tempo", "metrics"],
    vars: { TRISTATE_TRACES: "tempo" },
    collector: "tempo",
  },
];

for (const setup of setups) {
  const resolved = resolve(compose, setup.vars);
  const services = Object.fromEntries(
    Object.entries(resolved.services ?? {}).filter(
      ([, s]) => !s.profiles || s.profiles.some((p) => setup.profiles.includes(p)),
    ),
  );
  const where = (msg) => `${setup.name}: ${msg}`;

  const hostPorts = new Map();
  for (const [name, service] of Object.entries(services)) {
    for (const spec of service.ports ?? []) {
      const { host, container } = parsePort(spec);
      check(
        Number.isInteger(host) && Number.isInteger(container),
        where(`${name}: port "${spec}" is not host:container`),
      );
      check(!hostPorts.has(host), where(`${name} and ${hostPorts.get(host)} both publish host port ${host}`));
      hostPorts.set(host, name);
      check(!(host in LOCAL_PORTS), where(`${name} publishes host port ${host}, taken by ${LOCAL_PORTS[host]}`));
    }
    // `required: false`: compose starts the service without that one when its profile is off.
    const deps = Array.isArray(service.depends_on)
      ? service.depends_on
      : Object.keys(service.depends_on ?? {}).filter((dep) => service.depends_on[dep]?.required !== "false");
    for (const dep of deps) check(dep in services, where(`${name} depends on ${dep}, which does not start`));
    for (const volume of service.volumes ?? []) {
      const source = String(volume).split(":")[0];
      if (source.startsWith("."))
        check(existsSync(join(root, source)), where(`${name} mounts ${source}, which does not exist`));
    }
  }

  const executor = services.executor;
  check(Boolean(executor), where("no executor service"));
  if (executor) {
    check(
      (executor.ports ?? []).some((p) => parsePort(p).container === 4100 && parsePort(p).host === 4100),
      where("the executor does not publish 4100 (the README's curl calls http://127.0.0.1:4100)"),
    );
    check(
      executor.environment?.HOST === "0.0.0.0",
      where("the executor listens on loopback only inside its container"),
    );
    const endpoint = executor.environment?.OTEL_EXPORTER_OTLP_ENDPOINT ?? "";
    const url = URL.canParse(endpoint) ? new URL(endpoint) : null;
    check(url?.hostname === setup.collector, where(`traces go to "${endpoint}", not to ${setup.collector}`));
    const collector = url ? services[url.hostname] : undefined;
    check(Boolean(collector), where(`the trace collector ${url?.hostname} does not start`));
    if (collector && url?.hostname === "tempo") {
      const mount = (collector.volumes ?? []).map(String).find((v) => v.includes("tempo.yaml"));
      const config = mount ? parseYamlSubset(readFileSync(join(root, mount.split(":")[0]), "utf8")) : null;
      const http = config?.distributor?.receivers?.otlp?.protocols?.http?.endpoint ?? "";
      check(http.endsWith(`:${url.port}`), where(`Tempo's OTLP/HTTP receiver (${http}) is not on port ${url.port}`));
    }
  }
  const web = services.web;
  check(
    (web?.ports ?? []).some((p) => parsePort(p).container === Number(web.environment?.PORT ?? 3000)),
    where("the dashboard is not published"),
  );
  check(web?.environment?.EXECUTOR_URL === "http://executor:4100", where("the dashboard does not reach the executor"));
  // The dashboard listens on 127.0.0.1 unless told otherwise: in a container it must take every interface.
  check(web?.environment?.HOST === "0.0.0.0", where("the dashboard listens on the container's loopback only"));
  check(
    !(services.postgres?.ports ?? []).some((p) => parsePort(p).host === 5432),
    where("PostgreSQL takes host port 5432"),
  );

  checkMetricsServices(root, services, (ok, message) => check(ok, where(message)));
  if (services.grafana) {
    const mount = (services.grafana.volumes ?? []).map(String).find((v) => v.includes("/provisioning/datasources/"));
    check(Boolean(mount), where("Grafana has no provisioned data source"));
    if (mount) {
      const file = parseYamlSubset(readFileSync(join(root, mount.split(":")[0]), "utf8"));
      const tempo = (file?.datasources ?? []).find((d) => d.type === "tempo");
      check(
        tempo?.url === "http://tempo:3200",
        where("Grafana's Tempo data source does not point at http://tempo:3200"),
      );
    }
  }
}

if (problems.length) {
  console.error(`docker-compose.yml: ${problems.length} problem(s):\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
console.log(`docker-compose.yml: every setup checks out (${setups.map((s) => s.name.split(" ")[0]).join(", ")})`);
