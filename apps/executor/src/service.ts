import type { AddressInfo } from "node:net";
import { type AnyTool, createConfirmationTokens, createExecutor, DEFAULT_TENANT } from "@tristate/core";
import { openDatabase, type TristateDatabase } from "@tristate/db";
import { loadCatalog } from "./catalog/load.ts";
import { closeMcpUpstreams } from "./catalog/mcp-tool.ts";
import type { Env } from "./env.ts";
import { createLogger } from "./logger.ts";
import { createMetrics } from "./metrics/index.ts";
import { notifyHostPolicy } from "./notifications/allowed-hosts.ts";
import { humanQueueNotified, primeChannelCache } from "./notifications/channel-cache.ts";
import { startDeliveryLoop } from "./notifications/delivery-loop.ts";
import { notifyTools } from "./notifications/tools.ts";
import { createHttpServer } from "./server.ts";
import { boundedStep, SHUTDOWN_MARGIN_MS } from "./shutdown.ts";
import { startSweeper } from "./sweeper-loop.ts";
import { startTelemetry, type Telemetry } from "./telemetry.ts";
import { createTenants } from "./tenants.ts";
import type { Services } from "./trpc/context.ts";

/** A running executor service. */
export interface RunningService {
  /** Base URL, e.g. `http://127.0.0.1:4100`. */
  url: string;
  services: Services;
  /** True when it runs on the embedded PGlite database. */
  embedded: boolean;
  /** The admin key created on this first start of an empty embedded database (shown once), else null. */
  firstAdminKey: string | null;
  /** OpenTelemetry tracing (off unless an OTLP endpoint is configured). */
  telemetry: Telemetry;
  /**
   * Graceful stop: refuses new requests, lets in-flight calls finish for up to the grace period
   * (calls still running then are handed over: their PENDING records carry deadlines, and any
   * replica's sweeper reconciles them), stops the sweeper, closes the database. Bounded: it resolves
   * within `TRISTATE_SHUTDOWN_GRACE_MS` + `SHUTDOWN_MARGIN_MS` (shutdown.ts) whatever the database
   * does; a step not finished by then is abandoned and logged. Never rejects.
   */
  close(): Promise<void>;
  /** HTTP requests being served now (`/trpc` and `/mcp`). */
  inFlight(): number;
}

/**
 * Starts the service: database (PostgreSQL at `DATABASE_URL`, else embedded), catalog, executor,
 * HTTP API, sweeper.
 * @throws Error when the configuration or catalog is invalid or the database is unreachable.
 */
export async function startService(env: Env, overrides: { tools?: AnyTool[] } = {}): Promise<RunningService> {
  const logger = createLogger(env.LOG_LEVEL);
  const tools = overrides.tools ?? (await loadCatalog(env.TRISTATE_CONFIG, env));
  const opened = await openDatabase({
    ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
    ...(env.TRISTATE_DATA_DIR ? { dataDir: env.TRISTATE_DATA_DIR } : {}),
    poolSize: env.TRISTATE_DB_POOL_SIZE,
    timeouts: {
      connectTimeoutMs: env.TRISTATE_DB_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: env.TRISTATE_DB_STATEMENT_TIMEOUT_MS,
      idleInTransactionTimeoutMs: env.TRISTATE_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    },
  });
  // The service is typed to the ports; the PostgreSQL store itself only backs `services.store`.
  const db: TristateDatabase = opened;
  const { keys } = db;
  // Before the executor: the core's spans then go to the SDK's tracer provider.
  const telemetry = startTelemetry(env, logger);
  const confirmations = createConfirmationTokens(env.TRISTATE_CONFIRMATION_SECRET);
  // Metrics (issue 23 §1): the service's own MeterProvider; its gauge refresher reads the database.
  const metrics = createMetrics({
    env,
    db,
    tenants: () => db.keys.tenants(),
    tools,
    now: () => Date.now(),
    logger,
  });
  // One executor per tenant, each over its tenant's view of the log (made on first use); calls,
  // resolutions and compensations are counted at these ports (metrics/observe.ts).
  const catalog = new Set(tools.map((t) => t.name));
  // Where channels may point (TRISTATE_NOTIFY_ALLOW_HOSTS): one policy, so one pinned dispatcher.
  const notifyHosts = notifyHostPolicy(env.TRISTATE_NOTIFY_ALLOW_HOSTS);
  const tenants = createTenants(
    db,
    (store) => {
      const tenant = store.tenant ?? DEFAULT_TENANT;
      void primeChannelCache(db, tenant);
      return createExecutor({
        store,
        tools,
        // Tristate's own notifications run as internal tools of every tenant's executor (issue 23 §3):
        // recorded and reconciled like any effect, never listed to nor callable by agents; each send
        // reads its channel's URL and secret from the database (any replica's sweeper can resend).
        internalTools: notifyTools({
          tenant,
          targets: db.notificationOutbox,
          smtpUrl: env.TRISTATE_SMTP_URL,
          smtpFrom: env.TRISTATE_SMTP_FROM,
          hosts: notifyHosts,
        }),
        humanQueueNotified: () => humanQueueNotified(db, tenant),
        confirmations,
        backgroundOutcomes: env.TRISTATE_BACKGROUND_OUTCOMES,
        onBackgroundWriteError: (err, key) =>
          logger.error(
            { err, idempotencyKey: key },
            "an answered SUCCEEDED could not be written: the record stays PENDING until a sweeper's probe settles it",
          ),
        probe: {
          attempts: env.TRISTATE_PROBE_ATTEMPTS,
          spacingMs: env.TRISTATE_PROBE_SPACING_MS,
          timeoutMs: env.TRISTATE_PROBE_TIMEOUT_MS,
        },
      });
    },
    { metrics, catalog },
  );
  const executor = tenants.executor(DEFAULT_TENANT);
  const services: Services = {
    env,
    executor,
    tenants,
    db,
    store: opened.store,
    keys,
    sessions: db.sessions,
    logger,
    confirmations,
    now: () => executor.clock.nowEpochMs(),
    metrics,
  };
  const ready = async () => {
    const { applied, expected } = await db.migrationStatus();
    return applied >= expected
      ? { ok: true, detail: `database reachable; ${applied} migrations applied` }
      : { ok: false, detail: `database reachable; ${applied} of ${expected} migrations applied` };
  };
  const http = createHttpServer(services, ready);
  try {
    await new Promise<void>((resolve, reject) => {
      http.server.once("error", reject);
      http.server.listen(env.PORT, env.HOST, () => resolve());
    });
  } catch (error) {
    // Release what was opened (the embedded database's lock above all), so a caller may retry on
    // another port in the same process (the demo's "or a free port when taken").
    await metrics.shutdown();
    await db.close().catch(() => {});
    await telemetry.shutdown().catch(() => {});
    if ((error as { code?: string }).code !== "EADDRINUSE") throw error;
    // The bare `listen EADDRINUSE` named no setting; the code stays for callers that retry elsewhere.
    throw Object.assign(
      new Error(
        `${env.HOST}:${env.PORT} is in use (another Tristate?): set PORT=<a free port> or stop the other process`,
        {
          cause: error,
        },
      ),
      { code: "EADDRINUSE" },
    );
  }
  // After listening: a start that failed must not make (and lose) the first admin key.
  let firstAdminKey: string | null = null;
  if ((await keys.count()) === 0) {
    if (db.embedded) {
      firstAdminKey = (await keys.create({ name: "first admin (created at first start)", role: "admin" })).secret;
    } else {
      logger.warn(
        "no API keys in this database yet: create the first admin key with `npm run tristate -- keys create --role admin --name <you>` (same DATABASE_URL)",
      );
    }
  }
  const sweeper = startSweeper({
    tenants,
    intervalMs: env.TRISTATE_SWEEP_INTERVAL_MS,
    limit: env.TRISTATE_SWEEP_LIMIT,
    lanes: env.TRISTATE_SWEEP_LANES,
    concurrency: env.TRISTATE_SWEEP_CONCURRENCY,
    logger,
  });
  const notifications =
    env.TRISTATE_NOTIFY_INTERVAL_MS > 0
      ? startDeliveryLoop({
          db,
          tenants,
          intervalMs: env.TRISTATE_NOTIFY_INTERVAL_MS,
          groupWindowMs: env.TRISTATE_NOTIFY_GROUP_WINDOW_MS,
          conditionsEveryMs: env.TRISTATE_NOTIFY_CONDITIONS_INTERVAL_MS,
          unknownShareThreshold: env.TRISTATE_UNKNOWN_SHARE_THRESHOLD,
          dashboardUrl: env.TRISTATE_DASHBOARD_URL,
          secretTools: new Set(tools.filter((t) => (t.secretFields ?? []).length > 0).map((t) => t.name)),
          logger,
          counter: metrics,
        })
      : null;
  // Rollups for stats.overview and retention (issue 14): a background step, never on a call's path.
  // Never archive a record younger than the key retention, nor one the MCP default scope may look up
  // (its neighbour window: up to three scope periods back, default-scope.ts); a claim still finds an
  // archived record (rule 15), the scope's look-up reads the live table only.
  const archiveHorizonMs = Math.max(
    0,
    3 * env.TRISTATE_MCP_DEFAULT_SCOPE_MS,
    ...tools.map((t) => t.keyRetentionMs ?? 0),
  );
  const readModel =
    env.TRISTATE_ROLLUP_INTERVAL_MS > 0
      ? db.startReadModelLoop({
          intervalMs: env.TRISTATE_ROLLUP_INTERVAL_MS,
          archiveAfterMs: env.TRISTATE_ARCHIVE_AFTER_MS > 0 ? archiveHorizonMs + env.TRISTATE_ARCHIVE_AFTER_MS : null,
          onError: (err, step) => logger.error({ err, step }, "read model step failed"),
        })
      : null;
  // The embedded database has no autovacuum: what it would do, every minute (every outcome write
  // leaves a dead row, and the hot path slows as they pile up). A server's own autovacuum does this.
  const vacuum = db.embedded
    ? db.startVacuumLoop({
        onError: (err) => logger.error({ err }, "vacuum of the embedded database failed"),
        onVacuum: (tables, durationMs) =>
          logger.debug({ tables, duration_ms: durationMs }, "vacuumed the embedded database"),
      })
    : null;
  const { port } = http.server.address() as AddressInfo;
  const url = `http://${env.HOST.includes(":") ? `[${env.HOST}]` : env.HOST}:${port}`;
  logger.info(
    { url, embedded: db.embedded, tools: tools.map((t) => t.name) },
    tools.length ? "executor listening" : "executor listening with an empty catalog (set TRISTATE_CONFIG)",
  );

  let closing: Promise<void> | null = null;
  return {
    url,
    services,
    embedded: db.embedded,
    firstAdminKey,
    telemetry,
    inFlight: () => http.inFlight(),
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => http.server.close(() => resolve()));
        http.server.closeIdleConnections();
        const until = Date.now() + env.TRISTATE_SHUTDOWN_GRACE_MS;
        while (http.inFlight() > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
        if (http.inFlight() > 0)
          logger.warn(
            { inFlight: http.inFlight() },
            "handing over in-flight calls: their PENDING records will be reconciled by a sweeper",
          );
        http.server.closeAllConnections();
        // Every step below is bounded (shutdown.ts): a database that never answers cannot hold the stop.
        const by = until + SHUTDOWN_MARGIN_MS / 2;
        await boundedStep("close the HTTP server", () => closed, by, logger);
        await boundedStep("stop the sweeper", () => sweeper.stop(), until, logger);
        await boundedStep("stop the notification loop", async () => notifications?.stop(), until, logger);
        // Answers already given must not be left to the sweeper when the writes can still land — within
        // the grace period: a write stuck on the database is left to the sweepers like a call in flight.
        await boundedStep("land answered outcomes", () => tenants.outcomesWritten(), until, logger);
        await boundedStep("stop the read model", async () => readModel?.stop(), by, logger);
        await boundedStep("stop the vacuum loop", async () => vacuum?.stop(), by, logger);
        await boundedStep("close MCP upstreams", () => closeMcpUpstreams(tools), by, logger);
        await boundedStep("stop the metrics", () => metrics.shutdown(), by, logger);
        await boundedStep("close the database", () => db.close(), by, logger);
        await boundedStep("flush telemetry", () => telemetry.shutdown(), by, logger);
        logger.info("executor stopped");
      })();
      return closing;
    },
  };
}
