import { TRPCClientError } from "@trpc/client";
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import type { Session } from "~/trpc/types";
import { executorClient } from "./executor-client";
import { SESSION_COOKIE } from "./session-cookie";

/** The outcome of checking a key with the executor. */
export type KeyCheck =
  | { ok: true; session: Session }
  | { ok: false; reason: "invalid" | "role" | "unreachable"; message: string };

/** Asks the executor who `apiKey` belongs to; only viewer, operator and admin keys may use the dashboard. */
export async function checkKey(apiKey: string): Promise<KeyCheck> {
  try {
    const session = await executorClient(apiKey).auth.whoami.query();
    if (session.role === "agent") {
      return {
        ok: false,
        reason: "role",
        message: "This key has the role agent. The dashboard needs a viewer, operator or admin key.",
      };
    }
    return { ok: true, session };
  } catch (error) {
    if (error instanceof TRPCClientError && error.data?.httpStatus === 401) {
      return { ok: false, reason: "invalid", message: "This API key is invalid or revoked." };
    }
    return {
      ok: false,
      reason: "unreachable",
      message: "The executor could not be reached. Try again in a moment.",
    };
  }
}

/**
 * The signed-in user of this request, or a redirect to the login page (with `next` set to `path`)
 * when there is no valid session.
 */
export async function requireSession(path: string): Promise<Session> {
  const jar = await cookies();
  const apiKey = jar.get(SESSION_COOKIE)?.value;
  const login = `/login?next=${encodeURIComponent(path)}`;
  if (!apiKey) redirect(login);
  const check = await checkKey(apiKey);
  if (!check.ok) {
    if (check.reason === "unreachable") throw new Error(check.message);
    redirect(login);
  }
  return check.session;
}
