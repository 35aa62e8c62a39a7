import type { AppRouter } from "@tristate/executor/router";
import { type TRPCClient, TRPCClientError } from "@trpc/client";
import { identityAlternatives, identityPath, intentPath, runOrIdentityPath, type SearchTarget } from "./search";

/** What the search needs to ask the executor (the box uses the browser's client, `/search` the server's). */
export interface SearchLookups {
  /** True when a record has this idempotency key (`intents.get`; false on 404). */
  keyExists(key: string): Promise<boolean>;
  /** The key of a record with this trace id, or null (`intents.list` filtered by `traceId`). */
  keyOfTrace(traceId: string): Promise<string | null>;
  /** True when the run exists (`runs.get`; false on 404). */
  runExists(runId: string): Promise<boolean>;
  /** True when a record's business identity holds the value (`intents.byIdentity`, one item). */
  identityHolds(value: string): Promise<boolean>;
}

/**
 * Where a search leads, by precedence: an idempotency key, then a trace id (its first record); a
 * run that exists when no record's identity holds the value; otherwise the records whose identity
 * holds it (that page links the run when both match). When neither the exact value is held nor a run
 * has it, the first of its {@link identityAlternatives} a record's identity holds (its page says what
 * was typed). `null` for an empty search; `message` when the text cannot be searched.
 * @throws whatever a lookup throws (the executor unreachable, a session that ended).
 */
export async function resolveSearch(
  target: SearchTarget,
  lookups: SearchLookups,
): Promise<{ path: string } | { message: string } | null> {
  switch (target.kind) {
    case "empty":
      return null;
    case "invalid":
      return { message: target.reason };
    case "identity": {
      if (await lookups.identityHolds(target.value)) return { path: identityPath(target.value) };
      return { path: await alternativePath(target.value, lookups) };
    }
    case "runOrIdentity": {
      const [run, identity] = await Promise.all([lookups.runExists(target.value), lookups.identityHolds(target.value)]);
      if (!run && !identity) return { path: await alternativePath(target.value, lookups) };
      return { path: runOrIdentityPath(target.value, { run, identity }) };
    }
    case "hex32": {
      if (await lookups.keyExists(target.value)) return { path: intentPath(target.value) };
      const traced = await lookups.keyOfTrace(target.value);
      return { path: traced ? intentPath(traced) : identityPath(target.value) };
    }
  }
}

/** The identity page of the first alternative a record holds (noting what was typed), else of the value. */
async function alternativePath(value: string, lookups: SearchLookups): Promise<string> {
  for (const alternative of identityAlternatives(value)) {
    if (await lookups.identityHolds(alternative)) return identityPath(alternative, undefined, value);
  }
  return identityPath(value);
}

/** False on a 404 (no such record or run in the caller's tenant); any other error is thrown. */
function unless404(error: unknown): false {
  if (error instanceof TRPCClientError && (error.data as { httpStatus?: number } | undefined)?.httpStatus === 404)
    return false;
  throw error;
}

/**
 * {@link SearchLookups} over a tRPC client of the executor (the browser's or the server's), in
 * `scope`'s tenant (an admin's tenant filter; empty: the key's own, or every tenant for admins).
 */
export function trpcSearchLookups(client: TRPCClient<AppRouter>, scope: { tenant?: string }): SearchLookups {
  return {
    keyExists: (key) => client.intents.get.query({ key, ...scope }).then(() => true, unless404),
    keyOfTrace: async (traceId) =>
      (await client.intents.list.query({ filters: { traceId }, limit: 1, ...scope })).items[0]?.key ?? null,
    runExists: (runId) => client.runs.get.query({ runId, ...scope }).then(() => true, unless404),
    identityHolds: async (value) =>
      (await client.intents.byIdentity.query({ value, limit: 1, ...scope })).items.length > 0,
  };
}
