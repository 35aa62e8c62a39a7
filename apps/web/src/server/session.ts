import { TRPCClientError } from "@trpc/client";
import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import type { Session } from "~/trpc/types";
import { executorClient } from "./executor-client";
import { forwardedFor } from "./forwarded-for";
import { SESSION_COOKIE } from "./session-cookie";

/** The outcome of signing in with a key. */
export type SignIn =
  | { ok: true; session: Session; sessionId: string; expiresAtEpochMs: number }
  | { ok: false; reason: "invalid" | "role" | "throttled" | "unreachable"; message: string };

/**
 * Signs in: the executor's `sessions.create`, called with the key as the bearer (the key's one use),
 * opens a server-side session and answers its opaque id. Only viewer, operator and admin keys may.
 * `clientChain` is the browser's `X-Forwarded-For` chain: a bad key counts against the browser's
 * address in the executor's throttle, not against this server's.
 */
export async function openSession(apiKey: string, clientChain?: string): Promise<SignIn> {
  try {
    const made = await executorClient({ apiKey }, clientChain).sessions.create.mutate();
    return {
      ok: true,
      session: { id: made.id, name: made.name, role: made.role, tenant: made.tenant },
      sessionId: made.sessionId,
      expiresAtEpochMs: made.expiresAtEpochMs,
    };
  } catch (error) {
    const status = error instanceof TRPCClientError ? (error.data?.httpStatus as number | undefined) : undefined;
    if (status === 401) return { ok: false, reason: "invalid", message: "This API key is invalid or revoked." };
    if (status === 403) {
      return {
        ok: false,
        reason: "role",
        message: "This key has the role agent. The dashboard needs a viewer, operator or admin key.",
      };
    }
    if (status === 429) {
      return { ok: false, reason: "throttled", message: "Too many failed sign-ins from here. Try again later." };
    }
    return {
      ok: false,
      reason: "unreachable",
      message: "The executor could not be reached, so nobody can sign in right now. Try again in a moment.",
    };
  }
}

/** Ends a session at the executor (sign-out). Best effort: an unreachable executor leaves it to expire. */
export async function endSession(sessionId: string, clientChain?: string): Promise<void> {
  await executorClient({ sessionId }, clientChain)
    .sessions.end.mutate({ sessionId })
    .catch(() => undefined);
}

/** Sessions last confirmed by the executor, by session id: shown while it cannot be reached. */
const lastKnown = new Map<string, Session>();
const LAST_KNOWN_MAX = 1000;

/** Whose page this is, as {@link requireSession} could tell. */
export interface PageSession {
  session: Session;
  /** True when the executor could not be asked: `session` is the last one it confirmed (or a placeholder). */
  unconfirmed: boolean;
}

/** Shown while the executor is unreachable and this session was never confirmed by this server. */
const UNCONFIRMED: Session = { id: "", name: "(not confirmed yet)", role: "viewer", tenant: "" };

/**
 * The signed-in user of this request, or a redirect to the login page (with `next` set to `path`)
 * when there is no valid session (none, signed out, expired, idle too long, or its key revoked).
 * When the executor cannot be reached (or does not answer in time) the page still renders: with the
 * session it last confirmed (or a viewer placeholder) and `unconfirmed`, so the outage banner can
 * show and the page re-checks when the executor is back. Never throws for an outage.
 */
export async function requireSession(path: string): Promise<PageSession> {
  const jar = await cookies();
  const sessionId = jar.get(SESSION_COOKIE)?.value;
  const login = `/login?next=${encodeURIComponent(path)}`;
  if (!sessionId) redirect(login);
  let session: Session;
  try {
    session = await executorClient({ sessionId }, forwardedFor(await headers())).auth.whoami.query();
  } catch (error) {
    const status = error instanceof TRPCClientError ? (error.data?.httpStatus as number | undefined) : undefined;
    if (status === 401) {
      lastKnown.delete(sessionId);
      redirect(login);
    }
    return { session: lastKnown.get(sessionId) ?? UNCONFIRMED, unconfirmed: true };
  }
  lastKnown.delete(sessionId);
  lastKnown.set(sessionId, session);
  if (lastKnown.size > LAST_KNOWN_MAX) lastKnown.delete(lastKnown.keys().next().value as string);
  return { session, unconfirmed: false };
}
