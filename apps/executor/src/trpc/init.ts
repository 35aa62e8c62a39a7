import { context as otelContext } from "@opentelemetry/api";
import { findBadText, invalidArgs } from "@tristate/core";
import { type ApiKeyRole, isTransientDatabaseError } from "@tristate/db";
import { initTRPC } from "@trpc/server";
import { AppError, appErrorOf, isAppError, toTRPCError } from "../app-error.ts";
import { type CallInexactNumber, inexactNumberRule } from "../request-body.ts";
import { currentRequestId } from "../request-id.ts";
import { useUnknownKeysMessages } from "../unknown-keys.ts";
import type { Context } from "./context.ts";

// An unknown input key is answered with the keys the input allows (unknown-keys.ts).
useUnknownKeysMessages();

type InputIssue = { code?: string; path: (string | number)[]; message: string; keys?: string[] };

/**
 * The input field a schema refusal names, as a dot path: for an unknown key the key itself (its
 * object's path and the key), else the issue's path; `input` for the input as a whole.
 */
function fieldOf(issue: InputIssue): string {
  const path = issue.code === "unrecognized_keys" && issue.keys?.[0] ? [...issue.path, issue.keys[0]] : issue.path;
  return path.join(".") || "input";
}

/**
 * tRPC without a transformer: agents in any language send the input as plain JSON and read
 * `{"result":{"data": …}}`. Errors carry `data.field` (the input field at fault), `data.detail`, and
 * `data.requestId` (the answer's `X-Request-Id`). A schema refusal reads `<path>: <rule>`; an unknown
 * key `<object path, or input>: unknown key "<key>"; allowed keys: <keys>`.
 */
const t = initTRPC.context<Context>().create({
  errorFormatter({ shape, error }) {
    const cause = isAppError(error.cause) ? error.cause : undefined;
    // An unknown key first: a misspelt key (`runid`) also leaves its right spelling missing.
    const issues = (error.cause as { issues?: InputIssue[] } | undefined)?.issues;
    const zodIssue = issues?.find((i) => i.code === "unrecognized_keys") ?? issues?.[0];
    const field = cause?.field ?? (zodIssue ? fieldOf(zodIssue) : undefined);
    const requestId = currentRequestId();
    // Internal errors keep their detail in the log (onError), never in the answer.
    const message =
      shape.data.code === "INTERNAL_SERVER_ERROR" && !cause
        ? "internal error; the service log has the details"
        : zodIssue && !cause
          ? `${zodIssue.path.join(".") || "input"}: ${zodIssue.message}`
          : shape.message;
    return {
      ...shape,
      message,
      data: {
        code: shape.data.code,
        httpStatus: shape.data.httpStatus,
        path: shape.data.path,
        ...(field ? { field } : {}),
        ...(cause?.detail !== undefined ? { detail: cause.detail } : {}),
        ...(requestId !== undefined ? { requestId } : {}),
      },
    };
  },
});

export const router = t.router;

/** Seconds a client waits before repeating a call the executor's database failed transiently. */
export const TRANSIENT_RETRY_AFTER_S = 1;

/**
 * Runs the procedure inside the caller's trace context (W3C traceparent) and maps every error it
 * throws to a tRPC (and so HTTP) status — the one place that does, so procedures throw and never
 * translate: the service's own errors, refused operator actions, invalid query input and arguments
 * through {@link appErrorOf}. The executor's own transient failures — its database restarting, a
 * terminated backend, a full pool — are 503 with `Retry-After`, never 500 (RFC 9110 §15.6.4): the
 * same call (same run, step and arguments) is always safe to repeat, since it replays or reconciles.
 * Anything else is a 500 whose detail stays in the log.
 */
const base = t.procedure.use(async ({ ctx, next }) => {
  const result = await otelContext.with(ctx.traceContext, () => next());
  if (result.ok) return result;
  const known = appErrorOf(result.error.cause);
  if (known) throw toTRPCError(known);
  if (isTransientDatabaseError(result.error.cause ?? result.error)) {
    ctx.services.logger.warn({ err: result.error.cause ?? result.error }, "transient database failure (503)");
    ctx.setHeader("retry-after", String(TRANSIENT_RETRY_AFTER_S));
    throw toTRPCError(
      new AppError(
        "UNAVAILABLE",
        "the executor's database failed for a moment; repeat the same call (same runId, stepId and arguments) " +
          `in ${TRANSIENT_RETRY_AFTER_S} s: the executor replays or reconciles it, it never runs twice`,
        { detail: { retryAfterMs: TRANSIENT_RETRY_AFTER_S * 1000, retrySame: true } },
      ),
    );
  }
  return result;
});

/**
 * Every procedure's raw input, walked deep before its own schema: a string (a value or a property
 * name, at any depth) with NUL or a lone surrogate is refused with BAD_INPUT naming the field and the
 * rule — the log's PostgreSQL holds neither, so such input would otherwise fail mid-write (a 500).
 * It runs after the role check (a caller without a valid key still gets 401/403), before any read or
 * write, so nothing is written.
 */
const wellFormedText = t.middleware(async ({ getRawInput, next }) => {
  const raw = await getRawInput();
  const bad = findBadText(raw);
  if (bad) {
    const field = bad.path.length ? bad.path.join(".") : "input";
    // In a tool call's arguments it is the model's to fix: the same INVALID_ARGUMENTS envelope as a
    // schema refusal (calls.execute), so clients and adapters hand it to the model as the tool result.
    const tool = typeof raw === "object" && raw !== null ? (raw as { tool?: unknown }).tool : undefined;
    const inArgs = bad.path[0] === "args" && bad.path.length > 1 && typeof tool === "string";
    const detail = inArgs ? invalidArgs(tool, { field: bad.path.slice(1).join("."), rule: bad.rule }) : undefined;
    throw toTRPCError(new AppError("BAD_INPUT", `${field}: ${bad.rule}`, { field, ...(detail ? { detail } : {}) }));
  }
  return next();
});

/**
 * Numbers of this call's input that JSON parsing would not keep exactly (request-body.ts hands them
 * on as their exact text): refused with BAD_INPUT naming the field, except in a tool call's
 * arguments, where `calls.execute` accepts one for a field declared to take it losslessly (a string).
 * The context keeps only this call's numbers in its arguments, paths relative to `args`.
 */
const exactNumbers = t.middleware(async ({ ctx, batchIndex, path, next }) => {
  const mine = (ctx.inexactNumbers ?? []).filter((n) => n.call === batchIndex);
  if (mine.length === 0) return ctx.inexactNumbers ? next({ ctx: { ...ctx, inexactNumbers: [] } }) : next();
  const inArgs = (n: CallInexactNumber) => path === "calls.execute" && n.path[0] === "args" && n.path.length > 1;
  const outside = mine.find((n) => !inArgs(n));
  if (outside) {
    const field = outside.path.length ? outside.path.join(".") : "input";
    throw toTRPCError(new AppError("BAD_INPUT", `${field}: ${inexactNumberRule(outside.text)}`, { field }));
  }
  return next({ ctx: { ...ctx, inexactNumbers: mine.map((n) => ({ ...n, path: n.path.slice(1) })) } });
});

/** Longest a read waits for this replica's outcome writes in flight, ms; then it reads what the log holds. */
export const OUTCOMES_VISIBLE_WAIT_MS = 2_000;

/**
 * Reads of records and operator actions see the outcomes this replica has already answered: a
 * SUCCEEDED whose write went on in the background (`TRISTATE_BACKGROUND_OUTCOMES`) lands before the
 * procedure reads. Only the caller's tenant's writes are waited for (an admin's: every tenant's, as
 * an admin reads across them), and for at most {@link OUTCOMES_VISIBLE_WAIT_MS}: a write stuck on
 * the database must not stall every read; the record then reads PENDING, which is what the log holds.
 */
export const outcomesVisible = t.middleware(async ({ ctx, next }) => {
  const tenants = ctx.services.tenants;
  const written = ctx.auth?.role === "admin" ? tenants.outcomesWritten() : tenants.outcomesWritten(ctx.auth?.tenant);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([written, new Promise((resolve) => (timer = setTimeout(resolve, OUTCOMES_VISIBLE_WAIT_MS)))]);
  clearTimeout(timer);
  return next();
});

/** No key needed (health of the API itself). */
export const publicProcedure = base.use(wellFormedText).use(exactNumbers);

function withRoles(roles: readonly ApiKeyRole[]) {
  return base
    .use(({ ctx, next }) => {
      if (!ctx.auth) {
        throw toTRPCError(
          new AppError(
            "UNAUTHENTICATED",
            ctx.presentedKey
              ? "the API key is invalid or revoked"
              : "an API key is required: Authorization: Bearer <key>",
          ),
        );
      }
      if (!roles.includes(ctx.auth.role)) {
        throw toTRPCError(
          new AppError("FORBIDDEN", `role ${ctx.auth.role} may not do this; it needs one of: ${roles.join(", ")}`),
        );
      }
      return next({ ctx: { ...ctx, auth: ctx.auth } });
    })
    .use(wellFormedText)
    .use(exactNumbers);
}

/** Agents calling tools (admins too). */
export const agentProcedure = withRoles(["agent", "admin"]);
/** Anyone with a key may read the catalog and the prompt rule. */
export const anyKeyProcedure = withRoles(["agent", "viewer", "operator", "admin"]);
/** Reading operator data. */
export const viewerProcedure = withRoles(["viewer", "operator", "admin"]).use(outcomesVisible);
/** Acting on records. */
export const operatorProcedure = withRoles(["operator", "admin"]).use(outcomesVisible);
/** Managing keys. */
export const adminProcedure = withRoles(["admin"]);
