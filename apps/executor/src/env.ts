import { isIP } from "node:net";
import { z } from "zod";
import { notifyHostPolicy } from "./notifications/allowed-hosts.ts";

const emptyAsUndefined = (v: unknown) => (v === "" ? undefined : v);
const optionalString = z.preprocess(emptyAsUndefined, z.string().min(1).optional());
/** An integer setting; unset or empty (`NAME=`, as compose files leave them): the default. */
const ms = (def: number, min: number, max: number) =>
  z.preprocess(emptyAsUndefined, z.coerce.number().int().min(min).max(max).default(def));
/** `10.0.0.1`, `::1`, `10.0.0.0/8`, `fd00::/8`. */
const isAddressOrRange = (entry: string) => {
  const [address = "", prefix, ...rest] = entry.split("/");
  const family = isIP(address);
  if (!family || rest.length) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
};

const schema = z.object({
  /** TCP port of the API. */
  PORT: ms(4100, 0, 65535),
  /** Interface to listen on. */
  HOST: z.preprocess(emptyAsUndefined, z.string().default("127.0.0.1")),
  /**
   * Where `tristate mcp` finds the running service: its base URL (`/mcp` is appended) or its `/mcp`
   * endpoint; `--url` overrides it. Absent: `http://<HOST>:<PORT>/mcp`, the local service as `npm start`
   * prints it (a wildcard HOST read as loopback).
   */
  TRISTATE_URL: z.preprocess(emptyAsUndefined, z.url().optional()),
  /** PostgreSQL URL; absent: the embedded PGlite database in TRISTATE_DATA_DIR. */
  DATABASE_URL: optionalString,
  /** Data folder of the embedded database. */
  TRISTATE_DATA_DIR: optionalString,
  /**
   * Connections of the service's PostgreSQL pool (claims, outcome writes, reads), per replica; the
   * embedded database always uses one. @default 40
   */
  TRISTATE_DB_POOL_SIZE: ms(40, 1, 1000),
  /**
   * Longest wait to open a PostgreSQL connection, or for a free one of the pool, ms (100–600000,
   * default 5000); then the query fails as a transient database error (503 with `Retry-After`).
   */
  TRISTATE_DB_CONNECT_TIMEOUT_MS: ms(5_000, 100, 600_000),
  /**
   * Longest a statement may run, ms (1000–3600000, default 30000): the server's `statement_timeout`
   * cancels it and rolls it back; the client gives up 2 s later (`query_timeout`) when the server
   * cannot be heard at all. A call never waits this long: its deadline bounds it first; this bounds
   * what the service holds (connections, locks) for a database that stopped answering. Migrations
   * run on their own connections, without it.
   */
  TRISTATE_DB_STATEMENT_TIMEOUT_MS: ms(30_000, 1_000, 3_600_000),
  /**
   * A database session left idle inside a transaction is ended by the server after this long, ms
   * (1000–3600000, default 60000), releasing its locks.
   */
  TRISTATE_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: ms(60_000, 1_000, 3_600_000),
  /**
   * Path of the tool catalog (a module such as `tristate.config.ts`, or a `.json` file), relative to the
   * working directory. Absent: `npm start` (start.ts) sets it to the repository's `tristate.config.ts`;
   * the service started any other way serves an empty catalog (and logs so).
   */
  TRISTATE_CONFIG: optionalString,
  /** Base URL of the payment service the example catalog (`tristate.config.ts`) calls. */
  TRISTATE_PAYMENTS_URL: z.preprocess(emptyAsUndefined, z.url().default("http://127.0.0.1:4201")),
  /** Base URL of the mail service the example catalog (`tristate.config.ts`) calls. */
  TRISTATE_MAIL_URL: z.preprocess(emptyAsUndefined, z.url().default("http://127.0.0.1:4202")),
  /** Longest budget one call may have, ms: a caller's later deadline is capped to it. */
  TRISTATE_MAX_BUDGET_MS: ms(120_000, 3_000, 3_600_000),
  /** Budget of a call that names no deadline, ms. */
  TRISTATE_DEFAULT_BUDGET_MS: ms(30_000, 3_000, 3_600_000),
  /** Largest request body, bytes (larger → 413). */
  TRISTATE_MAX_BODY_BYTES: ms(1_048_576, 1024, 64 * 1_048_576),
  /**
   * Most calls one tRPC batch may carry (`?batch=1`), and most JSON-RPC messages one MCP POST may carry;
   * larger batches → 400 naming the limit, nothing run.
   */
  TRISTATE_MAX_BATCH_CALLS: ms(20, 1, 1000),
  /** Largest answer, bytes (a batch's answers together); larger → 413 naming the limit instead. */
  TRISTATE_MAX_RESPONSE_BYTES: ms(16 * 1_048_576, 1024, 1024 * 1_048_576),
  /** Time a client has to send a request's headers, ms; then 408 and the connection is closed. */
  TRISTATE_HEADERS_TIMEOUT_MS: ms(10_000, 100, 600_000),
  /**
   * Time a client has to send a whole request, headers and body, ms; then 408 and the connection is
   * closed. It bounds receiving the request only: a call may run up to its deadline after that.
   */
  TRISTATE_REQUEST_TIMEOUT_MS: ms(30_000, 100, 3_600_000),
  /** How long an idle keep-alive connection stays open between requests, ms. */
  TRISTATE_KEEP_ALIVE_TIMEOUT_MS: ms(5_000, 100, 600_000),
  /** Most open client connections; further ones are closed at once (and logged). */
  TRISTATE_MAX_CONNECTIONS: ms(1000, 1, 1_000_000),
  /**
   * Most open connections from one address (trusted proxies exempt), so one client cannot take the
   * whole connection budget (slow bodies held open); further ones are closed at once.
   */
  TRISTATE_MAX_CONNECTIONS_PER_ADDRESS: ms(100, 1, 1_000_000),
  /** Failed authentications (bad, revoked or malformed key) one client address may make per window before 429. */
  TRISTATE_AUTH_FAILURES: ms(10, 1, 100_000),
  /** The window those failures are counted in, ms. */
  TRISTATE_AUTH_FAILURE_WINDOW_MS: ms(60_000, 1000, 86_400_000),
  /** How long an address that went over stays throttled (429 with `Retry-After`) for bad keys, ms. */
  TRISTATE_AUTH_BLOCK_MS: ms(300_000, 1000, 86_400_000),
  /**
   * Comma-separated addresses or CIDR ranges of reverse proxies (e.g. the dashboard's server) whose
   * `X-Forwarded-For` names the client; absent: the TCP peer is the client and the header is ignored.
   */
  TRISTATE_TRUSTED_PROXIES: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .optional()
      .transform((v) =>
        (v ?? "")
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean),
      )
      .refine((list) => list.every(isAddressOrRange), "each entry must be an IP address or CIDR range"),
  ),
  /** Longest wait between sweeper rounds that found nothing, ms (0 disables the sweeper); busy rounds run back to back. */
  TRISTATE_SWEEP_INTERVAL_MS: ms(5_000, 0, 3_600_000),
  /** Records one sweeper pass takes per tenant (reconciled 64 at a time). */
  TRISTATE_SWEEP_LIMIT: ms(1_000, 1, 10_000),
  /** Sweeper rounds run at once while there is a backlog (`lanes` of `startSweepLoop`); an idle sweeper polls with one. */
  TRISTATE_SWEEP_LANES: ms(2, 1, 16),
  /**
   * Records of one sweeper pass reconciled at once (each lane's): the bound on concurrent probes and
   * resends per replica and lane. Records whose probes find nothing run every probe round
   * (TRISTATE_PROBE_ATTEMPTS, TRISTATE_PROBE_SPACING_MS apart), so a backlog of them drains at about
   * lanes × this ÷ (attempts × spacing) records per second.
   */
  TRISTATE_SWEEP_CONCURRENCY: ms(64, 1, 1024),
  /** Wait between rounds of the read side's background step (rollup refresh, archiving), ms; 0 disables it. */
  TRISTATE_ROLLUP_INTERVAL_MS: ms(5_000, 0, 3_600_000),
  /**
   * Retention: settled records older than the catalog's longest key retention + this period (ms) move
   * to the archive tables (still found by key and run); 0 (the default): never archive.
   */
  TRISTATE_ARCHIVE_AFTER_MS: ms(0, 0, 10 * 365 * 86_400_000),
  /**
   * Answer a SUCCEEDED call before its outcome write lands, where that write is not durable anyway
   * (an `idempotent_by_key` tool: a lost write costs a deduplicated resend): the claim is then the only write a call waits for
   * (`backgroundOutcomes` of `createExecutor`; issue 13). This service's reads wait for the writes
   * it has in flight; another replica may see the record PENDING for that long. @default true
   */
  TRISTATE_BACKGROUND_OUTCOMES: z.preprocess(emptyAsUndefined, z.stringbool().default(true)),
  /** Reconciliation probe rounds before concluding "absent". */
  TRISTATE_PROBE_ATTEMPTS: ms(3, 1, 20),
  /** Spacing unit between probe rounds, ms (round i waits min(i × spacing, remaining / 4)). */
  TRISTATE_PROBE_SPACING_MS: ms(1000, 0, 600_000),
  /** Timeout of one probe, ms. */
  TRISTATE_PROBE_TIMEOUT_MS: ms(5000, 100, 600_000),
  /**
   * Grace period on SIGTERM/SIGINT for in-flight calls, ms (0–600000, default 10000). The process
   * exits within this plus `SHUTDOWN_MARGIN_MS` (2 s, shutdown.ts) whatever the database does: what is
   * still unsettled then is left to the sweepers.
   */
  TRISTATE_SHUTDOWN_GRACE_MS: ms(10_000, 0, 600_000),
  /**
   * Secret for confirmation tokens (HMAC-SHA256), at least 16 characters; replicas must share it.
   * Absent: a random one per process (tokens then die with the process).
   */
  TRISTATE_CONFIRMATION_SECRET: z.preprocess(emptyAsUndefined, z.string().min(16).optional()),
  /**
   * The default scope of MCP calls that name no run (`io.tristate/runId`), ms (default 24 h): the run
   * is the API key's id and a window, never the MCP session (rule 15), so a repeat with the same tool
   * and identity by the same key within this long of the first call replays or reconciles it — after a
   * restart, on another replica, in a new session. Windows are twice this long; repeats up to three
   * times this apart may still be the same call. Changing it starts new windows.
   */
  TRISTATE_MCP_DEFAULT_SCOPE_MS: ms(86_400_000, 60_000, 30 * 86_400_000),
  /** Dashboard sessions (`sessions.create`): lifetime from sign-in, ms (default 12 h). */
  TRISTATE_SESSION_TTL_MS: ms(12 * 3_600_000, 60_000, 30 * 86_400_000),
  /** Dashboard sessions: ended after this long without a call, ms (default 30 min). */
  TRISTATE_SESSION_IDLE_MS: ms(30 * 60_000, 10_000, 30 * 86_400_000),
  /**
   * Notifications (issue 23 §3, docs/notifications.md): wait between rounds of the delivery loop, ms
   * (0 disables it on this replica; default 1000).
   */
  TRISTATE_NOTIFY_INTERVAL_MS: ms(1_000, 0, 3_600_000),
  /**
   * Notifications: events of one kind for one channel within this long of its last delivery are sent
   * as one grouped delivery when the window ends, ms (default 60000).
   */
  TRISTATE_NOTIFY_GROUP_WINDOW_MS: ms(60_000, 0, 86_400_000),
  /**
   * Notifications: how often the delivery loop checks the condition events (a tool's UNKNOWN share,
   * stale PENDING records), ms (default 30000; 100–3,600,000). Edge-triggered whatever the cadence.
   */
  TRISTATE_NOTIFY_CONDITIONS_INTERVAL_MS: ms(30_000, 100, 3_600_000),
  /**
   * Notifications: a tool's share of calls ending UNKNOWN over the last 15 minutes above which an
   * `unknown_share` event is raised (0–1, default 0.05).
   */
  TRISTATE_UNKNOWN_SHARE_THRESHOLD: z.preprocess(emptyAsUndefined, z.coerce.number().min(0).max(1).default(0.05)),
  /** Notifications: the SMTP server e-mail channels send through (`smtp://host:port`, `smtps://user:pass@host`); absent: e-mail channels fail. */
  TRISTATE_SMTP_URL: z.preprocess(
    emptyAsUndefined,
    z.url({ protocol: /^smtps?$/, error: "must be an smtp:// or smtps:// URL" }).optional(),
  ),
  /** Notifications: the sender of notification e-mails. */
  TRISTATE_SMTP_FROM: z.preprocess(emptyAsUndefined, z.string().min(3).default("Tristate <tristate@localhost>")),
  /**
   * Notifications: the hosts webhook and Slack channel URLs may point at, comma-separated, the entries
   * of a catalog's `httpAllowHosts`: an exact host or IP (allowed whatever it resolves to), `*.<domain>`
   * or `*` (only if every address the host resolves to is public). Default `*`: no private, loopback,
   * link-local (cloud metadata) address. Checked at create and at every send (notifications/allowed-hosts.ts).
   */
  TRISTATE_NOTIFY_ALLOW_HOSTS: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .default("*")
      .transform((v) =>
        v
          .split(",")
          .map((e) => e.trim())
          .filter((e) => e !== ""),
      )
      .superRefine((entries, ctx) => {
        try {
          notifyHostPolicy(entries);
        } catch (error) {
          ctx.addIssue({ code: "custom", message: (error as Error).message.replace(/^catalog: /, "") });
        }
      }),
  ),
  /** Notifications: the dashboard's base URL, linked from notifications. */
  TRISTATE_DASHBOARD_URL: z.preprocess(
    emptyAsUndefined,
    z.url({ protocol: /^https?$/, error: "must be an absolute http(s) URL" }).default("http://localhost:3000"),
  ),
  /**
   * Metrics (issue 23 §1, docs/metrics.md): a bearer token, at least 16 characters, no whitespace, that may scrape
   * `GET /metrics` (every tenant's series) besides viewer, operator and admin keys — for Prometheus.
   * Absent: only keys may scrape.
   */
  TRISTATE_METRICS_TOKEN: z.preprocess(
    emptyAsUndefined,
    z.string().min(16).regex(/^\S+$/, "must not contain whitespace (a bearer token is one word)").optional(),
  ),
  /**
   * Metrics: how often the gauges read from the database (human queue, stale PENDING) are refreshed,
   * ms (100–3600000, default 15000); scrapes read the last values.
   */
  TRISTATE_METRICS_REFRESH_MS: ms(15_000, 100, 3_600_000),
  /** pino log level. */
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** OTLP/HTTP endpoint (standard OpenTelemetry variable); tracing is off when neither is set. */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalString,
  /** OTLP/HTTP metrics URL (standard variable); absent: `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/metrics`, or no OTLP metrics. */
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: optionalString,
  /** Interval between OTLP metric exports, ms (standard variable; 1000–3600000, default 60000). */
  OTEL_METRIC_EXPORT_INTERVAL: ms(60_000, 1_000, 3_600_000),
  OTEL_SERVICE_NAME: z.preprocess(emptyAsUndefined, z.string().default("tristate-executor")),
  /** OTLP protocol (standard variable); `@opentelemetry/exporter-trace-otlp-http` sends `http/json`. */
  OTEL_EXPORTER_OTLP_PROTOCOL: z.preprocess(
    emptyAsUndefined,
    z.enum(["http/json", "http/protobuf", "grpc"]).optional(),
  ),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.preprocess(
    emptyAsUndefined,
    z.enum(["http/json", "http/protobuf", "grpc"]).optional(),
  ),
  /** Set to `true` to turn tracing and OTLP metrics off even when an endpoint is set (standard variable); `/metrics` stays. */
  OTEL_SDK_DISABLED: z.preprocess(emptyAsUndefined, z.stringbool().default(false)),
});

/** Settings that must agree with each other. */
const checked = schema.refine((env) => env.TRISTATE_HEADERS_TIMEOUT_MS <= env.TRISTATE_REQUEST_TIMEOUT_MS, {
  path: ["TRISTATE_HEADERS_TIMEOUT_MS"],
  message: "must not exceed TRISTATE_REQUEST_TIMEOUT_MS (the whole request includes its headers)",
});

/** The service's configuration, validated at start. */
export type Env = z.infer<typeof schema>;

/**
 * Reads and validates the service's environment — the one place that reads `process.env`.
 * @throws Error listing every invalid variable with its rule.
 */
export function readEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const parsed = checked.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid configuration:\n${lines.join("\n")}`);
  }
  return parsed.data;
}
