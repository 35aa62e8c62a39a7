/**
 * The MCP gateway over Streamable HTTP at `/mcp` on the executor's port (issue 11 §3).
 *
 * - Every request carries `Authorization: Bearer <API key>` (the executor's keys): none → 401; a bad,
 *   revoked or malformed key → 401 and counts against the client's address in the auth throttle
 *   (then 429 with `Retry-After`, as for `/trpc`); a viewer or operator key → 403 (agent and admin keys
 *   call tools). The key's tenant decides the executor: its records, its keys.
 * - Sessions: `initialize` (a POST without `Mcp-Session-Id`) opens one. A session is a transport
 *   concept only: calls that name no run take the default scope (the key's id and a time window,
 *   default-scope.ts), so a repeat in a new session — after a restart, on another replica, after the
 *   server ended the first — replays or reconciles the first call. A session belongs to the key that
 *   opened it: another key sending its id gets 404, as for an unknown session. Sessions idle for
 *   {@link SESSION_IDLE_MS} are closed; a key holds at most {@link MAX_SESSIONS_PER_KEY} (its least
 *   recently used one ends when it opens more), and at most {@link MAX_SESSIONS} are open per process
 *   (then 503). A session with a call in flight is never ended by the server (idle or over the key's
 *   limit): its call's answer reaches the client. `DELETE /mcp` ends one.
 * - POSTs are answered as JSON (no SSE stream); `GET /mcp` (a server-to-client stream) is 405.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { type ApiKeyInfo, isTransientDatabaseError } from "@tristate/db";
import {
  arrivalNow,
  arrivalOf,
  markArrival,
  mcpRequestArrival,
  NotInTimeError,
  preCallBoundMs,
  type TurnHint,
  within,
} from "../arrival.ts";
import { BodyRefusal, type InexactNumber, parseExactJson, readUtf8Body } from "../request-body.ts";
import type { AuthThrottle } from "../trpc/auth-throttle.ts";
import type { Services } from "../trpc/context.ts";
import { createGatewayServer } from "./gateway-server.ts";
import { refuseMcpBody } from "./request-checks.ts";
import { META_DEADLINE } from "./run-step.ts";

/** A session unused this long is closed, ms (30 min). */
export const SESSION_IDLE_MS = 30 * 60_000;
/** Most open sessions per executor process. */
export const MAX_SESSIONS = 10_000;
/**
 * Most open sessions per API key: a key that opens more ends its own least recently used one, so
 * one key (one tenant) can never fill the process's sessions for the others.
 */
export const MAX_SESSIONS_PER_KEY = 100;

/** Roles that may call tools over MCP. */
const CALLER_ROLES: ReadonlySet<string> = new Set(["agent", "admin"]);

interface Session {
  transport: StreamableHTTPServerTransport;
  keyId: string;
  lastUsedEpochMs: number;
  /** Calls of this session in flight: the server never ends a session while it is above 0. */
  inFlight: { count: number };
}

type ParsedBody = { value: unknown; inexact: InexactNumber[] };

/**
 * The turns of an MCP body: one per `tools/call` (the deadline in its `_meta`, else none: the default
 * budget); the key check, done once for a batch, is bounded by the tightest. No call: the default.
 */
function turnOfMcpBody(value: unknown): TurnHint[] {
  const turns: TurnHint[] = [];
  for (const message of Array.isArray(value) ? value : [value]) {
    const m = message as { method?: unknown; params?: { _meta?: Record<string, unknown> } } | null;
    if (m?.method !== "tools/call") continue;
    const deadlineEpochMs = m.params?._meta?.[META_DEADLINE];
    turns.push(typeof deadlineEpochMs === "number" ? { deadlineEpochMs } : {});
  }
  return turns;
}

/** Whether the server may end this session now (no call of it in flight). */
const idle = (s: Session) => s.inFlight.count === 0;

/** The `/mcp` endpoint. */
export interface McpHttpHandler {
  /** Serves one request to `/mcp` (any method). Never throws; answers errors as JSON-RPC error bodies. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Open sessions now. */
  sessions(): number;
  /** Closes every session (at shutdown). */
  close(): Promise<void>;
}

/**
 * Creates the `/mcp` handler.
 * @param throttle the HTTP server's auth throttle (shared with `/trpc`).
 */
export function createMcpHttpHandler(services: Services, throttle: AuthThrottle): McpHttpHandler {
  const { env, logger } = services;
  const budget = { maxBudgetMs: env.TRISTATE_MAX_BUDGET_MS, defaultBudgetMs: env.TRISTATE_DEFAULT_BUDGET_MS };
  const sessions = new Map<string, Session>();
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [id, s] of sessions) {
      if (now - s.lastUsedEpochMs > SESSION_IDLE_MS && idle(s)) {
        sessions.delete(id);
        void s.transport.close().catch(() => {});
      }
    }
  }, 60_000);
  sweep.unref();

  const fail = (res: ServerResponse, status: number, code: number, message: string, headers = {}) => {
    if (res.headersSent) return void res.end();
    res
      .writeHead(status, { "content-type": "application/json", ...headers })
      .end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
  };

  /**
   * The caller's key, or null after answering 401/403/429 — or 503 when the key check (a database
   * read) failed transiently or did not finish by the turn's deadline minus the reserve (`turn`: the
   * body's `tools/call` deadlines, the tightest counting, else the default budget, from the request's arrival).
   */
  const authenticate = async (
    req: IncomingMessage,
    res: ServerResponse,
    turn: readonly TurnHint[],
  ): Promise<ApiKeyInfo | null> => {
    const header = req.headers.authorization;
    const match = typeof header === "string" ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    const boundMs = preCallBoundMs(arrivalOf(req, services.now()), turn, budget);
    let auth: ApiKeyInfo | null;
    try {
      auth = match?.[1] ? await within(services.keys.verify(match[1]), boundMs, "checking the API key") : null;
    } catch (error) {
      if (!(error instanceof NotInTimeError) && !isTransientDatabaseError(error)) throw error;
      logger.warn({ err: error }, "the MCP API key check failed or did not finish in time (503)");
      fail(
        res,
        503,
        -32000,
        error instanceof NotInTimeError
          ? `the API key could not be checked within the call's deadline minus its reserve (${Math.round(boundMs)} ms): the executor's database did not answer in time; nothing was done — repeat the same call`
          : "the executor's database failed for a moment; nothing was done — repeat the same call in 1 s",
        { "retry-after": "1" },
      );
      return null;
    }
    if (!auth) {
      if (header !== undefined) {
        const verdict = await throttle.failed(throttle.clientOf(req));
        if (verdict.throttled) {
          fail(res, 429, -32000, `too many failed API keys from this address; retry in ${verdict.retryAfterS} s`, {
            "retry-after": String(verdict.retryAfterS),
          });
          return null;
        }
      }
      fail(
        res,
        401,
        -32000,
        header === undefined
          ? "an API key is required: Authorization: Bearer <key>"
          : "the API key is invalid or revoked",
        { "www-authenticate": 'Bearer realm="tristate"' },
      );
      return null;
    }
    if (!CALLER_ROLES.has(auth.role)) {
      fail(res, 403, -32000, `role ${auth.role} may not call tools; it needs one of: agent, admin`);
      return null;
    }
    return auth;
  };

  /** The body read exactly (request-body.ts: UTF-8 or 400; numbers JSON would round kept as text), or null after answering. */
  const parseBody = async (req: IncomingMessage, res: ServerResponse): Promise<ParsedBody | null> => {
    try {
      return parseExactJson(await readUtf8Body(req, env.TRISTATE_MAX_BODY_BYTES));
    } catch (error) {
      if (error instanceof BodyRefusal) {
        fail(res, error.status, error.status === 413 ? -32600 : -32700, `parse error: ${error.message}`);
      } else fail(res, 400, -32700, "parse error: the body is not JSON");
      return null;
    }
  };

  /** The parsed body checked (request-checks.ts: the batch cap, inexact numbers), or null after answering the refusal. */
  const checkBody = (auth: ApiKeyInfo, parsed: ParsedBody, res: ServerResponse): { body: unknown } | null => {
    const tools = services.tenants.executor(auth.tenant).tools;
    const refusal = refuseMcpBody(
      parsed.value,
      parsed.inexact,
      (name) => tools.get(name),
      env.TRISTATE_MAX_BATCH_CALLS,
    );
    if (refusal) {
      res.writeHead(refusal.status, { "content-type": "application/json" }).end(
        JSON.stringify({
          jsonrpc: "2.0",
          error: { code: refusal.code, message: refusal.message, ...(refusal.data ? { data: refusal.data } : {}) },
          id: null,
        }),
      );
      return null;
    }
    return { body: parsed.value };
  };

  const open = async (auth: ApiKeyInfo, req: IncomingMessage, res: ServerResponse, body: unknown) => {
    const own = [...sessions.entries()].filter(([, s]) => s.keyId === auth.id);
    if (own.length >= MAX_SESSIONS_PER_KEY) {
      // The least recently used sessions end first; a session with a call in flight never does.
      const endable = own.filter(([, s]) => idle(s)).sort(([, a], [, b]) => a.lastUsedEpochMs - b.lastUsedEpochMs);
      const over = own.length - MAX_SESSIONS_PER_KEY + 1;
      if (endable.length < over) {
        return fail(
          res,
          503,
          -32000,
          `this key's ${MAX_SESSIONS_PER_KEY} MCP sessions all have calls in flight; try again when one ends`,
          {
            "retry-after": "1",
          },
        );
      }
      for (const [sid, s] of endable.slice(0, over)) {
        sessions.delete(sid);
        await s.transport.close().catch(() => {});
      }
    }
    if (sessions.size >= MAX_SESSIONS) {
      return fail(res, 503, -32000, "too many open MCP sessions; end unused ones (DELETE /mcp) and try again");
    }
    const id = randomUUID();
    const inFlight = { count: 0 };
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      enableJsonResponse: true,
      onsessioninitialized: (sid) => {
        sessions.set(sid, { transport, keyId: auth.id, lastUsedEpochMs: Date.now(), inFlight });
      },
    });
    transport.onclose = () => {
      sessions.delete(id);
    };
    const server = createGatewayServer({
      executor: services.tenants.executor(auth.tenant),
      defaultScope: {
        callerId: auth.id,
        windowMs: env.TRISTATE_MCP_DEFAULT_SCOPE_MS,
        hasRecord: async (key) => (await services.db.intents(auth.tenant).get(key)) !== null,
      },
      inFlight,
      now: () => services.now(),
      arrival: () => mcpRequestArrival.getStore() ?? arrivalNow(services.now()),
      budget,
      logger,
      caller: { name: auth.name, tenant: auth.tenant },
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    // The body first (as /trpc does): a tools/call's deadline bounds the key check.
    const parsed = req.method === "POST" ? await parseBody(req, res) : undefined;
    if (parsed === null) return;
    const auth = await authenticate(req, res, turnOfMcpBody(parsed?.value));
    if (!auth) return;
    if (req.method === "GET") {
      return fail(res, 405, -32000, "this server offers no server-to-client stream; POST requests", {
        allow: "POST, DELETE",
      });
    }
    if (req.method !== "POST" && req.method !== "DELETE") {
      return fail(res, 405, -32000, `method ${req.method} not allowed`, { allow: "POST, DELETE" });
    }
    const sessionId = req.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const session = sessions.get(sessionId);
      // Another key's session is answered like a session that does not exist.
      if (!session || session.keyId !== auth.id) return fail(res, 404, -32000, "session not found");
      session.lastUsedEpochMs = Date.now();
      if (req.method === "DELETE") return session.transport.handleRequest(req, res);
      const read = parsed && checkBody(auth, parsed, res);
      if (read) await session.transport.handleRequest(req, res, read.body);
      session.lastUsedEpochMs = Date.now();
      return;
    }
    if (req.method === "DELETE") return fail(res, 400, -32000, "Mcp-Session-Id header is required");
    const read = parsed && checkBody(auth, parsed, res);
    if (!read) return;
    if (!isInitializeRequest(read.body)) {
      return fail(res, 400, -32000, "no Mcp-Session-Id: the first request of a session must be initialize");
    }
    await open(auth, req, res, read.body);
  };

  return {
    handle(req, res) {
      const arrival = markArrival(req, services.now());
      mcpRequestArrival
        .run(arrival, () => serve(req, res))
        .catch((error: unknown) => {
          logger.error({ err: error }, "mcp request failed");
          fail(res, 500, -32603, "internal error; the service log has the details");
        });
    },
    sessions: () => sessions.size,
    async close() {
      clearInterval(sweep);
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.all(all.map((s) => s.transport.close().catch(() => {})));
    },
  };
}
