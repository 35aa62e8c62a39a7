import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from "node:http";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { markArrival, NotInTimeError, within } from "./arrival.ts";
import { batchCallCount, capResponseSize, writeTrpcError } from "./http-limits.ts";
import type { Logger } from "./logger.ts";
import { createMcpHttpHandler } from "./mcp/http.ts";
import { serveMetrics } from "./metrics/http.ts";
import { BodyRefusal, prepareTrpcBody } from "./request-body.ts";
import { withRequestId } from "./request-id.ts";
import { createAuthThrottle } from "./trpc/auth-throttle.ts";
import { createContext, type Services } from "./trpc/context.ts";
import { appRouter } from "./trpc/router.ts";

/**
 * The HTTP server: `/trpc/*` (the API), `/mcp` (the MCP gateway, Streamable HTTP; mcp/http.ts),
 * `/healthz` (liveness), `/readyz` (database reachable, migrations applied; 503 when the check does
 * not answer within {@link READY_CHECK_MS}), `/metrics` (Prometheus text; metrics/http.ts). Every answer carries `X-Request-Id` (request-id.ts) and
 * is logged as one `request` line with that id (health checks at debug level).
 */
export interface HttpServer {
  server: Server;
  /** Requests being served now. */
  inFlight(): number;
}

/**
 * Builds the HTTP server (not listening yet). `ready()` answers `/readyz`.
 *
 * Limits (settings in env.ts): headers within `TRISTATE_HEADERS_TIMEOUT_MS` and the whole request
 * within `TRISTATE_REQUEST_TIMEOUT_MS` (else 408 and the connection is closed; the answer itself may
 * take as long as the call's deadline), idle keep-alive connections closed after
 * `TRISTATE_KEEP_ALIVE_TIMEOUT_MS`, at most `TRISTATE_MAX_CONNECTIONS` connections, bodies up to
 * `TRISTATE_MAX_BODY_BYTES` (413), batches up to `TRISTATE_MAX_BATCH_CALLS` calls (400), answers up to
 * `TRISTATE_MAX_RESPONSE_BYTES` (413), and failed keys throttled per client address (429).
 */
export function createHttpServer(
  services: Services,
  ready: () => Promise<{ ok: boolean; detail: string }>,
): HttpServer {
  const { env } = services;
  const throttle = createAuthThrottle(env, () => services.logger);
  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: "/trpc/",
    maxBodySize: env.TRISTATE_MAX_BODY_BYTES,
    maxBatchSize: env.TRISTATE_MAX_BATCH_CALLS,
    createContext: ({ req, res }) => createContext(services, req, res, throttle),
    onError({ error, path }) {
      if (error.code === "INTERNAL_SERVER_ERROR") services.logger.error({ err: error, path }, "procedure failed");
    },
  });
  const mcp = createMcpHttpHandler(services, throttle);
  let inFlight = 0;
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  };
  const limits: ServerOptions = {
    headersTimeout: env.TRISTATE_HEADERS_TIMEOUT_MS,
    requestTimeout: env.TRISTATE_REQUEST_TIMEOUT_MS,
    keepAliveTimeout: env.TRISTATE_KEEP_ALIVE_TIMEOUT_MS,
    // How often Node checks the two timeouts above (its default, 30 s, would stretch them).
    connectionsCheckingInterval: Math.min(1000, env.TRISTATE_HEADERS_TIMEOUT_MS),
  };
  const server = createServer(limits, (req: IncomingMessage, res: ServerResponse) => {
    // Budgets count from here (arrival.ts): time spent before a procedure runs is part of them.
    markArrival(req, services.now());
    withRequestId(req, res, (id) => {
      logAnswer(req, res, id, () => services.logger);
      route(req, res);
    });
  });
  const route = (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? "/";
    const path = url.split("?")[0] ?? "/";
    if (path === "/healthz") return json(res, 200, { ok: true });
    if (path === "/readyz") {
      // Within a second whatever the database does: a check that has not answered in time is "not ready".
      within(ready(), READY_CHECK_MS, "the database check").then(
        (r) => json(res, r.ok ? 200 : 503, r),
        (error: unknown) =>
          json(res, 503, {
            ok: false,
            detail:
              error instanceof NotInTimeError
                ? `database not reachable: it did not answer within ${READY_CHECK_MS} ms`
                : `database not reachable: ${String(error)}`,
          }),
      );
      return;
    }
    if (path === "/metrics") {
      serveMetrics(services, throttle, req, res).catch((error: unknown) => {
        services.logger.error({ err: error }, "serving /metrics failed");
        if (!res.headersSent) res.writeHead(503, { "content-type": "text/plain; charset=utf-8", "retry-after": "1" });
        res.end("metrics unavailable for a moment (the key could not be checked)\n");
      });
      return;
    }
    if (path === "/mcp") {
      inFlight++;
      res.on("close", () => inFlight--);
      return mcp.handle(req, res);
    }
    if (!path.startsWith("/trpc/"))
      return json(res, 404, { error: { message: `no route ${path}; the API is under /trpc/ (MCP: /mcp)` } });
    // No key and a procedure that needs one: 401 at once, without reading (or waiting for) the body.
    if (req.headers.authorization === undefined && !onlyPublicProcedures(path)) {
      res.setHeader("connection", "close");
      return writeTrpcError(res, 401, "UNAUTHORIZED", "an API key is required: Authorization: Bearer <key>");
    }
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > env.TRISTATE_MAX_BODY_BYTES) {
      return writeTrpcError(
        res,
        413,
        "PAYLOAD_TOO_LARGE",
        `request body over ${env.TRISTATE_MAX_BODY_BYTES} bytes (TRISTATE_MAX_BODY_BYTES)`,
      );
    }
    // tRPC's own maxBatchSize refuses these too; this answer also names the limit.
    const calls = batchCallCount(url);
    if (calls > env.TRISTATE_MAX_BATCH_CALLS) {
      return writeTrpcError(
        res,
        400,
        "BAD_REQUEST",
        `a batch may carry at most ${env.TRISTATE_MAX_BATCH_CALLS} calls (TRISTATE_MAX_BATCH_CALLS); this one has ${calls}: split it`,
        { field: "batch" },
      );
    }
    capResponseSize(res, env.TRISTATE_MAX_RESPONSE_BYTES, (size) => {
      services.logger.warn({ path, size, limit: env.TRISTATE_MAX_RESPONSE_BYTES }, "answer over the size limit (413)");
      writeTrpcError(
        res,
        413,
        "PAYLOAD_TOO_LARGE",
        `the answer would be ${size} bytes, over ${env.TRISTATE_MAX_RESPONSE_BYTES} (TRISTATE_MAX_RESPONSE_BYTES): ask for fewer records or fewer calls per batch`,
      );
    });
    inFlight++;
    res.on("close", () => inFlight--);
    if (req.method !== "POST") return trpc(req, res);
    // The body read exactly: invalid UTF-8 refused, numbers JSON would round kept as text (request-body.ts).
    prepareTrpcBody(req, env.TRISTATE_MAX_BODY_BYTES).then(
      () => trpc(req, res),
      (error: unknown) => {
        if (error instanceof BodyRefusal) {
          const code = error.status === 413 ? "PAYLOAD_TOO_LARGE" : "BAD_REQUEST";
          return writeTrpcError(res, error.status, code, error.message, { field: "body" });
        }
        services.logger.error({ err: error, path }, "reading the request body failed");
        res.destroy();
      },
    );
  };
  server.maxConnections = env.TRISTATE_MAX_CONNECTIONS;
  const perAddress = new Map<string, number>();
  let refusedPerAddress = 0;
  server.on("connection", (socket) => {
    const address = socket.remoteAddress ?? "";
    if (throttle.isTrustedPeer(address)) return;
    const open = (perAddress.get(address) ?? 0) + 1;
    if (open > env.TRISTATE_MAX_CONNECTIONS_PER_ADDRESS) {
      socket.destroy();
      if (refusedPerAddress++ % 100 === 0) {
        services.logger.warn(
          { address, limit: env.TRISTATE_MAX_CONNECTIONS_PER_ADDRESS },
          "too many connections from one address: closed (TRISTATE_MAX_CONNECTIONS_PER_ADDRESS)",
        );
      }
      return;
    }
    perAddress.set(address, open);
    socket.once("close", () => {
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left <= 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  });
  server.on("close", () => void mcp.close());
  let dropped = 0;
  let droppedLoggedAt = 0;
  server.on("drop", () => {
    dropped++;
    const now = Date.now();
    if (now - droppedLoggedAt < 10_000) return; // at most one line per 10 s
    services.logger.warn(
      { dropped, limit: env.TRISTATE_MAX_CONNECTIONS },
      "connection limit reached: closed new connections (TRISTATE_MAX_CONNECTIONS)",
    );
    droppedLoggedAt = now;
    dropped = 0;
  });
  return { server, inFlight: () => inFlight };
}

/** Paths whose `request` line is logged at debug level (load balancers poll them). */
const HEALTH_PATHS: ReadonlySet<string> = new Set(["/healthz", "/readyz"]);

/**
 * Logs one line when the answer is done: `request` with `request_id`, `method`, `path` (no query: a
 * GET's input stays out of the log), `status`, `duration_ms`, and `aborted` when the client left first.
 * At info level, except health checks and answered reads (GET under 400: the dashboard polls them),
 * which are at debug: every refusal, failure and write has its line at the default level.
 */
function logAnswer(req: IncomingMessage, res: ServerResponse, id: string, logger: () => Logger): void {
  const started = performance.now();
  const path = (req.url ?? "/").split("?")[0] ?? "/";
  res.once("close", () => {
    const line = {
      request_id: id,
      method: req.method,
      path,
      status: res.statusCode,
      duration_ms: Math.round(performance.now() - started),
      ...(res.writableFinished ? {} : { aborted: true }),
    };
    const routine = HEALTH_PATHS.has(path) || (req.method === "GET" && res.statusCode < 400 && !line.aborted);
    if (routine) logger().debug(line, "request");
    else logger().info(line, "request");
  });
}

/** How long `/readyz` waits for the database check before answering 503, ms (so it answers within 1 s). */
const READY_CHECK_MS = 800;

/** Procedures that need no key (`publicProcedure`). */
const PUBLIC_PROCEDURES: ReadonlySet<string> = new Set(["sessions.end"]);

/** Whether every procedure a `/trpc/<a>,<b>` path names needs no key. */
function onlyPublicProcedures(path: string): boolean {
  let names: string[];
  try {
    names = decodeURIComponent(path.slice("/trpc/".length)).split(",");
  } catch {
    return false;
  }
  return names.length > 0 && names.every((name) => PUBLIC_PROCEDURES.has(name));
}
