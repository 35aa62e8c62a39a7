import type { IncomingMessage, ServerResponse } from "node:http";
import { type Context as OtelContext, propagation, ROOT_CONTEXT } from "@opentelemetry/api";
import type { ConfirmationTokens, Executor } from "@tristate/core";
import {
  type ApiKeyInfo,
  type ApiKeys,
  type DashboardSessions,
  isTransientDatabaseError,
  type PrismaIntentStore,
  type TristateDatabase,
} from "@tristate/db";
import { TRPCError } from "@trpc/server";
import { type Arrival, arrivalOf, NotInTimeError, preCallBoundMs, within } from "../arrival.ts";
import type { Env } from "../env.ts";
import type { Logger } from "../logger.ts";
import type { TristateMetrics } from "../metrics/index.ts";
import { type CallInexactNumber, inexactNumbersOf, turnOf } from "../request-body.ts";
import type { Tenants } from "../tenants.ts";
import type { AuthThrottle } from "./auth-throttle.ts";

/** Everything a procedure may use; built once at start. */
export interface Services {
  env: Env;
  /** The `default` tenant's executor; its catalog (`tools`) is every tenant's. Records: use `tenants`. */
  executor: Executor;
  /** Per-tenant executors and stores: the only way procedures reach records (issue 10). */
  tenants: Tenants;
  /** The database, by its ports: per-tenant views, dashboard reads, upkeep. Procedures reach it through this. */
  db: TristateDatabase;
  /**
   * The `default` tenant's PostgreSQL store itself (its `prisma` and `pool` reach every table).
   * @deprecated For tests and harnesses that inspect the tables; the service uses `db` (and `tenants`).
   */
  store: PrismaIntentStore;
  /** API keys (`db.keys`). */
  keys: ApiKeys;
  /** The dashboard's sign-in sessions (`Authorization: Session <id>`; `db.sessions`). */
  sessions: DashboardSessions;
  logger: Logger;
  /** Issues and verifies confirmation tokens for tools with a confirmation policy. */
  confirmations: ConfirmationTokens;
  /** Wall clock, epoch ms (the executor's). */
  now(): number;
  /** The service's metrics (metrics/index.ts; issue 23 §1): counters, `/metrics`'s text. */
  metrics: TristateMetrics;
}

/** Per-request context: the services, the caller's key (null when absent or invalid), the incoming trace context. */
export interface Context {
  services: Services;
  /** When the server first saw the request: budgets count from here (arrival.ts). */
  arrival: Arrival;
  auth: ApiKeyInfo | null;
  /** Whether an Authorization header was sent (to tell "no key" from "bad key"). */
  presentedKey: boolean;
  /** How the caller authenticated: an API key (`Bearer`), a dashboard session (`Session`), or not at all. */
  via: "key" | "session" | null;
  /** W3C trace context extracted from `traceparent`/`tracestate`. */
  traceContext: OtelContext;
  /** Sets a header of the answer (e.g. `Retry-After` on a 503). */
  setHeader(name: string, value: string): void;
  /**
   * Numbers of the request's body that JSON parsing would not keep exactly, handed on as their exact
   * text (request-body.ts); the `exactNumbers` middleware refuses them or leaves them to `calls.execute`.
   */
  inexactNumbers?: readonly CallInexactNumber[];
}

/**
 * Builds the request context: verifies `Authorization: Bearer <key>` (or `Session <id>`) and extracts
 * `traceparent`. A key that fails verification counts against the client's address in `throttle`;
 * once the address is over its limit, the request is refused with 429 and `Retry-After` (a valid key
 * always passes). The check reads the database, so it is bounded by what is left of the call's turn
 * (its `deadlineEpochMs`/`budgetMs`, else `TRISTATE_DEFAULT_BUDGET_MS`, from the request's arrival)
 * minus the reserve (`DEFAULT_RESERVE_MS`): past that, 503 with `Retry-After` and nothing done.
 * @throws TRPCError TOO_MANY_REQUESTS for a failed key from a throttled address; SERVICE_UNAVAILABLE
 *   when the check failed transiently or did not finish in time (nothing was done).
 */
export async function createContext(
  services: Services,
  req: IncomingMessage,
  res: ServerResponse,
  throttle: AuthThrottle,
): Promise<Context> {
  const { env } = services;
  const arrival = arrivalOf(req, services.now());
  const boundMs = preCallBoundMs(arrival, turnOf(req), {
    maxBudgetMs: env.TRISTATE_MAX_BUDGET_MS,
    defaultBudgetMs: env.TRISTATE_DEFAULT_BUDGET_MS,
  });
  try {
    const inexactNumbers = inexactNumbersOf(req);
    const ctx = await within(buildContext(services, req, res, throttle, arrival), boundMs, "checking the API key");
    return inexactNumbers.length > 0 ? { ...ctx, inexactNumbers } : ctx;
  } catch (error) {
    if (error instanceof NotInTimeError) {
      services.logger.warn({ boundMs: error.boundMs }, "the API key check did not finish by the call's deadline (503)");
      res.setHeader("retry-after", "1");
      throw new TRPCError({
        code: "SERVICE_UNAVAILABLE",
        message: `the API key could not be checked within the call's deadline minus its reserve (${Math.round(error.boundMs)} ms): the executor's database did not answer in time; nothing was done — repeat the same call`,
        cause: error,
      });
    }
    // Checking the key needs the database: its transient failures are 503 like the procedures' own.
    if (!isTransientDatabaseError(error)) throw error;
    services.logger.warn({ err: error }, "transient database failure while checking a key (503)");
    res.setHeader("retry-after", "1");
    throw new TRPCError({
      code: "SERVICE_UNAVAILABLE",
      message: "the executor's database failed for a moment; nothing was done — repeat the same call in 1 s",
      cause: error,
    });
  }
}

async function buildContext(
  services: Services,
  req: IncomingMessage,
  res: ServerResponse,
  throttle: AuthThrottle,
  arrival: Arrival,
): Promise<Context> {
  const header = req.headers.authorization;
  // A dashboard session (`sessions.create`) acts as its key while valid. Its 256-bit id is not
  // guessable, and an expired one is routine, so a bad session id is a 401 but no throttled failure.
  const session = typeof header === "string" ? /^Session\s+(\S+)\s*$/i.exec(header) : null;
  if (session?.[1]) {
    const { env } = services;
    const limits = { ttlMs: env.TRISTATE_SESSION_TTL_MS, idleMs: env.TRISTATE_SESSION_IDLE_MS };
    return {
      services,
      arrival,
      auth: await services.sessions.resolve(session[1], limits, services.now()),
      presentedKey: true,
      via: "session",
      traceContext: propagation.extract(ROOT_CONTEXT, req.headers),
      setHeader: (name, value) => res.setHeader(name, value),
    };
  }
  const match = typeof header === "string" ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  const auth = match?.[1] ? await services.keys.verify(match[1]) : null;
  if (header !== undefined && !auth) {
    const verdict = await throttle.failed(throttle.clientOf(req));
    if (verdict.throttled) {
      res.setHeader("retry-after", String(verdict.retryAfterS));
      throw new TRPCError({
        code: "TOO_MANY_REQUESTS",
        message: `too many failed API keys from this address (over ${services.env.TRISTATE_AUTH_FAILURES} per ${services.env.TRISTATE_AUTH_FAILURE_WINDOW_MS / 1000} s); retry in ${verdict.retryAfterS} s`,
      });
    }
  }
  return {
    services,
    arrival,
    auth,
    presentedKey: header !== undefined,
    via: auth ? "key" : null,
    traceContext: propagation.extract(ROOT_CONTEXT, req.headers),
    setHeader: (name, value) => res.setHeader(name, value),
  };
}
