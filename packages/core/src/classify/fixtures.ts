/**
 * Test fixtures of the client adapters' tests (never imported by production code): loopback remotes
 * that fail in the ways a real remote does, on 127.0.0.1 with port 0, and a plain node:http client
 * whose real errors the axios, got and AWS SDK tests wrap as those libraries do.
 */
import { once } from "node:events";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { Cleanup } from "@tristate/testing";

/** A self-signed certificate for `localhost` (EC P-256, valid until 2126), test use only. */
const SELF_SIGNED = {
  cert: `-----BEGIN CERTIFICATE-----
MIIBgDCCASWgAwIBAgIUT2dJl7FRPv1+FNsSsQvCDD5AUT8wCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTIwMTIxMjI1N1oYDzIxMjYxMTA3
MjEyMjU3WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAARk3zRmfUwxHSgdkB+V81vgAFZVJwPTHUTCdAMwZLF2ghuGZPxquymq
0cbeZw72McK++3PC9+jKDsGS1g0NWBTso1MwUTAdBgNVHQ4EFgQUk0C3rfNZBOwm
qydSzBA8d3UVFcgwHwYDVR0jBBgwFoAUk0C3rfNZBOwmqydSzBA8d3UVFcgwDwYD
VR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBGAiEAmFtYP74PTWjvW9hRjvXj
LOhnMozuE8yQuyzCDqM7hsMCIQCUZFlPKylR6oc4/5QLUmr8wYRgV87LnUMVTtj/
HreeUQ==
-----END CERTIFICATE-----
`,
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgso8UDPaj+qOiEWOR
MHllmRoen5HqNN2xpkCqTpOc7GKhRANCAARk3zRmfUwxHSgdkB+V81vgAFZVJwPT
HUTCdAMwZLF2ghuGZPxquymq0cbeZw72McK++3PC9+jKDsGS1g0NWBTs
-----END PRIVATE KEY-----
`,
};

async function listen(cleanup: Cleanup, server: net.Server): Promise<number> {
  cleanup.server(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return (server.address() as net.AddressInfo).port;
}

/** An origin (`http://127.0.0.1:<port>`) where nothing listens: connecting is refused. */
export async function closedOrigin(): Promise<string> {
  const server = net.createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/**
 * An HTTP server that reads each request and then behaves as `behaviour` says:
 * - `silent`: never answers (a read timeout after the request was written);
 * - `stall-body`: sends the status line, headers and a first chunk, then nothing more;
 * - `reset`: resets the connection (TCP RST) after reading the whole request;
 * - `close`: closes the connection (FIN) after reading the whole request, answering nothing;
 * - a number: answers that status with a short JSON body.
 * @returns its origin, `http://127.0.0.1:<port>`.
 */
export async function remote(
  cleanup: Cleanup,
  behaviour: "silent" | "stall-body" | "reset" | "close" | number,
): Promise<string> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (behaviour === "silent") return;
      if (behaviour === "reset") {
        req.socket.resetAndDestroy();
        return;
      }
      if (behaviour === "close") {
        req.socket.destroy();
        return;
      }
      if (behaviour === "stall-body") {
        res.writeHead(200, { "content-type": "text/plain", "content-length": "100" });
        res.write("partial");
        return;
      }
      res.writeHead(behaviour, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: `status ${behaviour}` }));
    });
  });
  return `http://127.0.0.1:${await listen(cleanup, server)}`;
}

/** An HTTPS server with a self-signed certificate: verification fails in the handshake. @returns its origin. */
export async function selfSignedOrigin(cleanup: Cleanup): Promise<string> {
  const server = https.createServer(SELF_SIGNED, (_req, res) => res.end("never reached"));
  return `https://localhost:${await listen(cleanup, server)}`;
}

/** What {@link post} saw: the request object, and the response (its body read) or the error. */
export interface NodeOutcome {
  request: http.ClientRequest;
  response?: http.IncomingMessage & { body: string };
  error?: Error & { code?: string };
}

/**
 * POSTs a small JSON body with node:http (or https) to `url`, as Node-based clients do underneath.
 * With `timeoutMs`, the request is destroyed when the socket is idle that long, with an error of
 * `onTimeout`'s making (what axios's and got's timeouts do). Never rejects: the outcome says.
 */
export function post(
  url: string,
  options: { timeoutMs?: number; onTimeout?: () => Error; signal?: AbortSignal } = {},
): Promise<NodeOutcome> {
  return new Promise((resolve) => {
    const client = url.startsWith("https:") ? https : http;
    const request = client.request(url, { method: "POST", headers: { "content-type": "application/json" } });
    if (options.signal) {
      options.signal.addEventListener("abort", () => request.destroy(options.signal?.reason));
    }
    if (options.timeoutMs !== undefined) {
      request.setTimeout(options.timeoutMs, () => request.destroy(options.onTimeout?.() ?? new Error("timeout")));
    }
    request.on("error", (error) => resolve({ request, error }));
    request.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ request, response: Object.assign(res, { body }) }));
      res.on("error", (error) => resolve({ request, error }));
    });
    request.end(JSON.stringify({ amount: 100 }));
  });
}

/** The rejection of `promise`. @throws Error when it fulfils. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}
