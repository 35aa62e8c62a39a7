"use client";

import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from "@tanstack/react-query";
import type { AppRouter } from "@tristate/executor/router";
import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { type ReactNode, useEffect, useState } from "react";
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
        retry: (count, error) => {
          const status = httpStatusOf(error);
          return (status === undefined || status >= 500) && count < 2;
        },
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
    createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: "/api/trpc", maxURLLength: 4000 })] }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
