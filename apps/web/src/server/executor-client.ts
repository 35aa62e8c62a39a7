import type { AppRouter } from "@tristate/executor/router";
import { createTRPCClient, httpLink } from "@trpc/client";
import { env } from "~/env";

/** A server-side client of the executor's API acting with `apiKey`. */
export function executorClient(apiKey: string) {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: new URL("/trpc", env.EXECUTOR_URL).toString(),
        headers: { authorization: `Bearer ${apiKey}` },
      }),
    ],
  });
}
