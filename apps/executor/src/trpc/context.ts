import type { IncomingMessage } from "node:http";
import { type Context as OtelContext, propagation, ROOT_CONTEXT } from "@opentelemetry/api";
import type { ConfirmationTokens, Executor } from "@tristate/core";
import type { ApiKeyInfo, ApiKeyStore, PrismaIntentStore } from "@tristate/db";
import type { Env } from "../env.ts";
import type { Logger } from "../logger.ts";

/** Everything a procedure may use; built once at start. */
export interface Services {
  env: Env;
  executor: Executor;
  store: PrismaIntentStore;
  keys: ApiKeyStore;
  logger: Logger;
  /** Issues and verifies confirmation tokens for tools with a confirmation policy. */
  confirmations: ConfirmationTokens;
  /** Wall clock, epoch ms (the executor's). */
  now(): number;
}

/** Per-request context: the services, the caller's key (null when absent or invalid), the incoming trace context. */
export interface Context {
  services: Services;
  auth: ApiKeyInfo | null;
  /** Whether an Authorization header was sent (to tell "no key" from "bad key"). */
  presentedKey: boolean;
  /** W3C trace context extracted from `traceparent`/`tracestate`. */
  traceContext: OtelContext;
}

/** Builds the request context: verifies `Authorization: Bearer <key>` and extracts `traceparent`. */
export async function createContext(services: Services, req: IncomingMessage): Promise<Context> {
  const header = req.headers.authorization;
  const match = typeof header === "string" ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  const auth = match?.[1] ? await services.keys.verify(match[1]) : null;
  return {
    services,
    auth,
    presentedKey: header !== undefined,
    traceContext: propagation.extract(ROOT_CONTEXT, req.headers),
  };
}
