"use client";

import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import type { AppRouter } from "@tristate/executor/router";
import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { type ReactNode, useEffect, useState } from "react";
import { shouldRetryRead, withTimeout } from "~/lib/request-policy";
import { keepLastData, restoreLastData } from "./persist";

/** tRPC hooks over TanStack Query, typed by the executor's router (a type-only import). */
export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

/** The HTTP status of a tRPC error, if any. */
export function httpStatusOf(error: unknown): number | undefined {
  return error instanceof TRPCClientError ? (error.data as { httpStatus?: number } | undefined)?.httpStatus : undefined;
}

function toLoginOn401(error: unknown): void {
  if (httpStatusOf(error) === 401 && typeof window !== "undefined") {
    const next = `${window.location.pathname}${window.location.search}`;
    window.location.assign(`/login?next=${encodeURIComponent(next)}`);
  }
}

function makeQueryClient(): QueryClient {
  return new QueryClient({
    queryCache: new QueryCache({ onError: toLoginOn401 }),
    mutationCache: new MutationCache({ onError: toLoginOn401 }),
    defaultOptions: {
      queries: {
        staleTime: 5_000,
        refetchIntervalInBackground: false,
        // The executor not answering is not retried here: the outage banner takes over at once.
        retry: (count, error) => shouldRetryRead(count, httpStatusOf(error)),
      },
      mutations: { retry: false },
    },
  });
}

/**
 * Whether an error means the executor did not answer (the proxy's 502/504, a 503, or no HTTP answer
 * at all) rather than an answer about the request.
 */
export function isUnreachable(error: unknown): boolean {
  const status = httpStatusOf(error);
  return status === undefined || status === 502 || status === 503 || status === 504;
}

/**
 * Query client and tRPC client for the dashboard: everything goes through `/api/trpc` (the session
 * proxy). The last answers are kept per tab (`./persist.ts`) so an outage shows them, not nothing.
 */
export function Providers({ children }: { children: ReactNode }) {
  const [queryClient] = useState(makeQueryClient);
  useEffect(() => {
    restoreLastData(queryClient);
    return keepLastData(queryClient);
  }, [queryClient]);
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({
      links: [
        httpBatchLink({
          url: "/api/trpc",
          maxURLLength: 4000,
          // Every request gives up in time, so a hanging server reads as an outage, not endless loading.
          fetch: (url, init) => fetch(url, withTimeout(init as RequestInit)),
        }),
      ],
    }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
