import type { AppRouter } from "@tristate/executor/router";
import { createTRPCClient, httpLink } from "@trpc/client";
import { env } from "~/env";
import { REQUEST_ID_HEADER } from "~/lib/request-id";
import { fetchExecutor } from "./executor-health";
import { FORWARDED_FOR } from "./forwarded-for";

/** How a server-side call authenticates: the API key (only at sign-in) or a dashboard session's id. */
export type Credential = { apiKey: string } | { sessionId: string };

/** The `Authorization` header for a credential (`Bearer <key>` or `Session <id>`). */
export function authorization(credential: Credential): string {
  return "apiKey" in credential ? `Bearer ${credential.apiKey}` : `Session ${credential.sessionId}`;
}

/**
 * A server-side client of the executor's API acting with `credential`, on behalf of the browser whose
 * address chain is `forwardedFor` (see `./forwarded-for.ts`; sent as `X-Forwarded-For`). Each call
 * times out after `EXECUTOR_TIMEOUT_MS` and updates the executor's health (`./executor-health.ts`).
 * @param requestId sent as `X-Request-Id` (`./request-id.ts`: the browser request's), so the
 *   executor's log line and spans of these calls carry the browser request's id; absent: the executor makes one.
 */
export function executorClient(credential: Credential, forwardedFor?: string, requestId?: string) {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: new URL("/trpc", env.EXECUTOR_URL).toString(),
        fetch: (url, init) => fetchExecutor(url, init as RequestInit),
        headers: {
          authorization: authorization(credential),
          ...(forwardedFor ? { [FORWARDED_FOR]: forwardedFor } : {}),
          ...(requestId ? { [REQUEST_ID_HEADER]: requestId } : {}),
        },
      }),
    ],
  });
}
