/**
 * Issue 21 §2: real client libraries that retry on their own, and a loopback remote that commits
 * every POST it reads and answers the first one 503 (the retry's trigger), every later one 201.
 * Each client is configured as its documentation says to retry a POST on a 503, with its delays cut
 * to milliseconds so the tests stay fast (no timing is asserted).
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import Anthropic from "@anthropic-ai/sdk";
import { DynamoDBClient, PutItemCommand } from "@aws-sdk/client-dynamodb";
import axios from "axios";
import axiosRetry from "axios-retry";
import got from "got";
import ky from "ky";
import OpenAI from "openai";
import Stripe from "stripe";
import { Agent, interceptors, request } from "undici";

/** A remote that commits every POST, then answers the first 503 and the others 201. */
export interface CommitThenFailRemote {
  readonly origin: string;
  /** Committed effects (one per POST read completely), with the `Idempotency-Key` each carried. */
  readonly effects: { path: string; key: string | undefined }[];
  /** Effects per distinct `Idempotency-Key`, as a remote that dedupes keys would count them. */
  distinctKeyedEffects(): number;
  close(): Promise<void>;
}

/**
 * Starts the remote on 127.0.0.1. `closeAfter503`: the 503 answer closes its connection
 * (`Connection: close`), so a client's retry opens a new one; otherwise the connection stays open
 * for reuse (Node's default keep-alive), where a node:http client writes its retry's head at once.
 */
export async function commitThenFail(options: { closeAfter503: boolean }): Promise<CommitThenFailRemote> {
  const effects: { path: string; key: string | undefined }[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.method !== "POST") {
        res.writeHead(404).end();
        return;
      }
      const key = req.headers["idempotency-key"];
      effects.push({ path: req.url ?? "", key: typeof key === "string" ? key : undefined });
      const headers: http.OutgoingHttpHeaders = { "content-type": "application/json" };
      if (effects.length === 1) {
        // Retry-After in every dialect the clients read, all "at once".
        Object.assign(headers, { "retry-after": "0", "retry-after-ms": "1", "x-should-retry": "true" });
        if (options.closeAfter503) headers.connection = "close";
        res.writeHead(503, headers).end(JSON.stringify({ error: { type: "overloaded", message: "try again" } }));
        return;
      }
      res.writeHead(201, headers).end(JSON.stringify({ id: `re_${effects.length}`, object: "refund" }));
    });
  });
  server.keepAliveTimeout = 10_000;
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    effects,
    distinctKeyedEffects: () => new Set(effects.map((e) => e.key ?? `unkeyed-${Math.random()}`)).size,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One refund POST through a retrying client: `origin` is the remote, `key` the executor's key. */
export type RetryingPost = (origin: string, key: string) => Promise<unknown>;

/** Whether a client's transport is undici (npm or Node's bundled copy for `fetch`) or node:http. */
export type Transport = "undici" | "node:http";

/** A retrying client under test: its name, transport and one POST through it. */
export interface RetryingClient {
  readonly name: string;
  readonly transport: Transport;
  readonly post: RetryingPost;
  /** Resources to release after the test (agents). */
  close(): Promise<void>;
}

/** undici's `interceptors.retry` composed on an Agent, retrying POST on 503 (the scenario). */
function undiciRetry(): RetryingClient {
  const dispatcher = new Agent().compose(
    interceptors.retry({ maxRetries: 2, methods: ["POST"], statusCodes: [503], minTimeout: 1, maxTimeout: 5 }),
  );
  return {
    name: "undici interceptors.retry",
    transport: "undici",
    post: async (origin, key) => {
      const res = await request(`${origin}/refunds`, {
        method: "POST",
        body: JSON.stringify({ amount: "49.90" }),
        headers: { "content-type": "application/json", "idempotency-key": key },
        dispatcher,
      });
      const body = await res.body.json();
      if (res.statusCode >= 300)
        throw Object.assign(new Error(`HTTP ${res.statusCode}`), { statusCode: res.statusCode });
      return body;
    },
    close: () => dispatcher.close(),
  };
}

function axiosWithRetry(): RetryingClient {
  const client = axios.create();
  axiosRetry(client, { retries: 2, retryDelay: () => 1, retryCondition: (e) => e.response?.status === 503 });
  return {
    name: "axios + axios-retry",
    transport: "node:http",
    post: async (origin, key) =>
      (await client.post(`${origin}/refunds`, { amount: "49.90" }, { headers: { "idempotency-key": key } })).data,
    close: async () => {},
  };
}

function gotRetry(): RetryingClient {
  return {
    name: "got",
    transport: "node:http",
    post: (origin, key) =>
      got
        .post(`${origin}/refunds`, {
          json: { amount: "49.90" },
          headers: { "idempotency-key": key },
          retry: { limit: 2, methods: ["POST"], statusCodes: [503], backoffLimit: 5, noise: 0 },
        })
        .json(),
    close: async () => {},
  };
}

function kyRetry(): RetryingClient {
  return {
    name: "ky",
    transport: "undici",
    post: (origin, key) =>
      ky
        .post(`${origin}/refunds`, {
          json: { amount: "49.90" },
          headers: { "idempotency-key": key },
          retry: { limit: 2, methods: ["post"], statusCodes: [503], backoffLimit: 5 },
        })
        .json(),
    close: async () => {},
  };
}

function openAi(): RetryingClient {
  return {
    name: "OpenAI SDK (maxRetries)",
    transport: "undici",
    post: (origin, key) =>
      new OpenAI({ apiKey: "sk-test", baseURL: `${origin}/v1`, maxRetries: 2 }).post("/refunds", {
        body: { amount: "49.90" },
        headers: { "idempotency-key": key },
      }),
    close: async () => {},
  };
}

function anthropic(): RetryingClient {
  return {
    name: "Anthropic SDK (maxRetries)",
    transport: "undici",
    post: (origin, key) =>
      new Anthropic({ apiKey: "sk-ant-test", baseURL: origin, maxRetries: 2 }).post("/v1/refunds", {
        body: { amount: "49.90" },
        headers: { "idempotency-key": key },
      }),
    close: async () => {},
  };
}

function stripe(): RetryingClient {
  return {
    name: "Stripe SDK (maxNetworkRetries)",
    transport: "node:http",
    post: (origin, key) => {
      const url = new URL(origin);
      const client = new Stripe("sk_test_x", {
        host: url.hostname,
        port: Number(url.port),
        protocol: "http",
        maxNetworkRetries: 2,
      });
      return client.refunds.create({ charge: "ch_1", amount: 4990 }, { idempotencyKey: key });
    },
    close: async () => {},
  };
}

function awsSdk(): RetryingClient {
  return {
    name: "AWS SDK v3 (standard retry strategy)",
    transport: "node:http",
    post: (origin, key) => {
      const client = new DynamoDBClient({
        endpoint: origin,
        region: "eu-west-1",
        credentials: { accessKeyId: "AKIDTEST", secretAccessKey: "secret" },
        maxAttempts: 3,
      });
      return client.send(
        new PutItemCommand({ TableName: "refunds", Item: { key: { S: key }, amount: { S: "49.90" } } }),
      );
    },
    close: async () => {},
  };
}

/** Every retrying client of issue 21 §2, each made fresh per test. */
export const RETRYING_CLIENTS: readonly (() => RetryingClient)[] = [
  undiciRetry,
  axiosWithRetry,
  gotRetry,
  kyRetry,
  openAi,
  anthropic,
  stripe,
  awsSdk,
];
