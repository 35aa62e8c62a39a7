import type { AnyTool } from "@tristate/core";
import { type ApiKeyRole, ApiKeyStore, createTestDatabase, type TestDatabase } from "@tristate/db";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { readEnv } from "../src/env.ts";
import { type RunningService, startService } from "../src/service.ts";

/**
 * A parsed JSON answer, loosely typed so tests can walk it (`res.json.result.data.status`).
 */
// biome-ignore lint/suspicious/noExplicitAny: test answers are walked freely and checked with expect
export type Json = any;

/** A service on its own test database, a fake remote, and one key per role. */
export interface TestStack {
  service: RunningService;
  remote: FakeRemote;
  db: TestDatabase;
  keys: Record<ApiKeyRole, string>;
  /** POST a procedure with a plain JSON body, as any agent would. */
  post(
    path: string,
    body: unknown,
    key?: string | null,
    headers?: Record<string, string>,
  ): Promise<{ status: number; json: Json; headers: Headers }>;
  /** GET a query procedure with `?input=<JSON>`. */
  get(path: string, input: unknown, key?: string | null): Promise<{ status: number; json: Json }>;
  close(): Promise<void>;
}

/** Starts a stack. `env` overrides the service's variables; `tools` the catalog (default: the refund tool). */
export async function startStack(
  options: { env?: Record<string, string>; tools?: (remote: FakeRemote) => AnyTool[] | Promise<AnyTool[]> } = {},
): Promise<TestStack> {
  const db = await createTestDatabase();
  const remote = await startFakeRemote();
  const env = readEnv({
    DATABASE_URL: db.url,
    PORT: "0",
    LOG_LEVEL: "silent",
    TRISTATE_SWEEP_INTERVAL_MS: "0",
    ...options.env,
  });
  const service = await startService(env, {
    tools: options.tools ? await options.tools(remote) : [refundTool(remote)],
  });
  const store = new ApiKeyStore(service.services.store.prisma);
  const keys = {} as Record<ApiKeyRole, string>;
  for (const role of ["agent", "viewer", "operator", "admin"] as const) {
    keys[role] = (await store.create({ name: `${role} key`, role })).secret;
  }
  const call = async (
    method: "GET" | "POST",
    url: string,
    body: string | undefined,
    key: string | null,
    headers: Record<string, string> = {},
  ) => {
    const res = await fetch(url, {
      method,
      headers: {
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: res.status, json, headers: res.headers };
  };
  return {
    service,
    remote,
    db,
    keys,
    post: (path, body, key = keys.agent, headers) =>
      call("POST", `${service.url}/trpc/${path}`, typeof body === "string" ? body : JSON.stringify(body), key, headers),
    get: (path, input, key = keys.viewer) =>
      call(
        "GET",
        `${service.url}/trpc/${path}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`,
        undefined,
        key,
      ),
    async close() {
      await service.close();
      await remote.close();
      await db.drop();
    },
  };
}
