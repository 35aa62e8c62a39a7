/**
 * `tristate mcp --direct`: the MCP gateway on stdio serving the catalog itself, on the database itself
 * (`tristate mcp` without it relays to the running service instead, bridge.ts). Whoever holds its
 * `DATABASE_URL` can read every tenant the URL reaches; this process acts only as its key's tenant.
 * The API key comes from `TRISTATE_API_KEY` (or `--key-file`) and is verified against the
 * database (an agent or admin key; its tenant decides the records and keys). Calls that name no run
 * in `_meta` take the default scope (the key's id and a time window, default-scope.ts), so a client
 * that restarts `tristate mcp` and repeats a call gets the first one replayed. The catalog is `TRISTATE_CONFIG`, the
 * database `DATABASE_URL` (else the embedded default, which one process opens at a time: stop the
 * service first). Logs go to stderr; stdout carries only MCP. No sweeper runs here: the service's
 * sweepers reconcile records this process leaves PENDING.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createConfirmationTokens, createExecutor } from "@tristate/core";
import { EmbeddedDatabaseInUseError, openDatabase } from "@tristate/db";
import pino, { type Logger } from "pino";
import { loadCatalog } from "../catalog/load.ts";
import { closeMcpUpstreams } from "../catalog/mcp-tool.ts";
import { readEnv } from "../env.ts";
import { armLastResortExit, boundedStep, SHUTDOWN_MARGIN_MS } from "../shutdown.ts";
import { createGatewayServer } from "./gateway-server.ts";
import { invalidRequest } from "./protocol-error.ts";
import { API_KEY_VARIABLE, type StdioIo } from "./stdio-io.ts";

/** What to do when the service holds the embedded database (one process opens it at a time). */
function embeddedInUse(error: EmbeddedDatabaseInUseError): string {
  return (
    `the embedded database is in use by process ${error.pid} (the Tristate service: npm start or pnpm demo). ` +
    "While the service runs, run tristate mcp without --direct (it relays to the service's /mcp with your key), " +
    "give tristate mcp --direct a PostgreSQL server in DATABASE_URL (postgresql://…, the one the service uses), " +
    "or point your MCP client at the service's Streamable HTTP endpoint (http://127.0.0.1:4100/mcp with " +
    "Authorization: Bearer <agent key>); or stop the service first."
  );
}

/**
 * Serves MCP on stdin/stdout until stdin ends (or SIGTERM/SIGINT), then lets calls in flight finish
 * (up to `TRISTATE_SHUTDOWN_GRACE_MS`), closes upstream connections and the database — each step
 * bounded, and the process exits (code 1) by grace + `SHUTDOWN_MARGIN_MS` whatever the database does.
 * @param secret the agent's key (`TRISTATE_API_KEY` or `--key-file`).
 * @returns the exit code: 0 after a normal end, 1 when the key is refused or start-up fails, 2 when
 *   the catalog (`TRISTATE_CONFIG`) is missing.
 */
export async function runMcpStdio(io: StdioIo, secret: string): Promise<number> {
  if (!io.env.TRISTATE_CONFIG) {
    io.err(
      "tristate mcp: set TRISTATE_CONFIG to the tool catalog (tristate.config.ts or a .json of declarative tools); without it there are no tools to serve\n",
    );
    return 2;
  }
  let db: Awaited<ReturnType<typeof openDatabase>> | undefined;
  /** When the closing steps must be done by, epoch ms (set once stopping). */
  let closeBy: number | undefined;
  let stopLogger: Logger = pino({ level: "warn" }, pino.destination(2));
  let tools: Awaited<ReturnType<typeof loadCatalog>> = [];
  try {
    const env = readEnv(io.env);
    db = await openDatabase({
      ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : { embedded: true }),
      ...(env.TRISTATE_DATA_DIR ? { dataDir: env.TRISTATE_DATA_DIR } : {}),
      poolSize: 8,
      timeouts: {
        connectTimeoutMs: env.TRISTATE_DB_CONNECT_TIMEOUT_MS,
        statementTimeoutMs: env.TRISTATE_DB_STATEMENT_TIMEOUT_MS,
        idleInTransactionTimeoutMs: env.TRISTATE_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      },
    });
    const { keys } = db;
    const auth = await keys.verify(secret);
    if (!auth) {
      io.err(`tristate mcp: ${API_KEY_VARIABLE} is not a valid key (invalid or revoked)\n`);
      return 1;
    }
    if (auth.role !== "agent" && auth.role !== "admin") {
      io.err(`tristate mcp: role ${auth.role} may not call tools; use an agent key\n`);
      return 1;
    }
    tools = await loadCatalog(env.TRISTATE_CONFIG, env);
    const logger = pino(
      { level: env.LOG_LEVEL, base: { service: "tristate-mcp" }, timestamp: pino.stdTimeFunctions.isoTime },
      pino.destination(2),
    );
    const store = db.intents(auth.tenant);
    const executor = createExecutor({
      store,
      tools,
      confirmations: createConfirmationTokens(env.TRISTATE_CONFIRMATION_SECRET),
      probe: {
        attempts: env.TRISTATE_PROBE_ATTEMPTS,
        spacingMs: env.TRISTATE_PROBE_SPACING_MS,
        timeoutMs: env.TRISTATE_PROBE_TIMEOUT_MS,
      },
    });
    const inFlight = { count: 0 };
    const server = createGatewayServer({
      executor,
      defaultScope: {
        callerId: auth.id,
        windowMs: env.TRISTATE_MCP_DEFAULT_SCOPE_MS,
        hasRecord: async (key) => (await store.get(key)) !== null,
      },
      now: () => executor.clock.nowEpochMs(),
      budget: { maxBudgetMs: env.TRISTATE_MAX_BUDGET_MS, defaultBudgetMs: env.TRISTATE_DEFAULT_BUDGET_MS },
      logger,
      caller: { name: auth.name, tenant: auth.tenant },
      inFlight,
      // Revoking the key takes effect at once here too: it is checked again before every call.
      async authorize() {
        if (!(await keys.verify(secret))) {
          throw invalidRequest(`${API_KEY_VARIABLE} is no longer valid (revoked); nothing was sent`);
        }
      },
    });
    const ended = new Promise<void>((resolve) => {
      io.stdin.on("end", resolve);
      io.stdin.on("close", resolve);
      process.once("SIGTERM", resolve);
      process.once("SIGINT", resolve);
    });
    await server.connect(new StdioServerTransport(io.stdin as NodeJS.ReadStream, io.stdout as NodeJS.WriteStream));
    logger.info({ tools: tools.map((t) => t.name), tenant: auth.tenant }, "tristate mcp serving on stdio");
    await ended;
    // Bounded whatever the database does (shutdown.ts): calls still in flight at the end of the grace
    // period, and closing steps that hang, are left to the service's sweepers.
    armLastResortExit(env.TRISTATE_SHUTDOWN_GRACE_MS, logger, () => inFlight.count);
    const until = Date.now() + env.TRISTATE_SHUTDOWN_GRACE_MS;
    while (inFlight.count > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    if (inFlight.count > 0) logger.warn({ inFlight: inFlight.count }, "handing over in-flight calls to the sweepers");
    closeBy = until + SHUTDOWN_MARGIN_MS / 2;
    stopLogger = logger;
    await boundedStep("close the MCP server", () => server.close(), closeBy, logger);
    return 0;
  } catch (error) {
    io.err(
      `tristate mcp: ${error instanceof EmbeddedDatabaseInUseError ? embeddedInUse(error) : error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  } finally {
    const by = closeBy ?? Date.now() + SHUTDOWN_MARGIN_MS;
    await boundedStep("close MCP upstreams", () => closeMcpUpstreams(tools), by, stopLogger);
    const opened = db;
    if (opened) await boundedStep("close the database", () => opened.close(), by, stopLogger);
  }
}
