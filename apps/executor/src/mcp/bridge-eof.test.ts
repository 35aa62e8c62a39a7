/**
 * `printf '<initialize>\n' | tristate mcp` (issue 22): stdin ends while the request is in flight. The
 * bridge waits for its answer (bounded by its deadline) and writes it before exiting — it used to
 * close the session at once, log "the answer was lost; repeating the same request" and exit silent.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runMcpBridge } from "./bridge.ts";

/** How long the stand-in service takes to answer initialize, ms. */
const SLOW_MS = 400;

describe("the bridge at end of input", () => {
  let server: Server;
  beforeAll(async () => {
    // Stands in for the service: answers initialize after SLOW_MS, accepts notifications and DELETE.
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => {
        if (req.method !== "POST") return void res.writeHead(200).end();
        const message = JSON.parse(body) as { id?: number; method: string };
        if (message.id === undefined) return void res.writeHead(202).end();
        const result = {
          protocolVersion: "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "stand-in", version: "1.0.0" },
        };
        setTimeout(() => {
          res
            .writeHead(200, { "content-type": "application/json", "mcp-session-id": "s-1" })
            .end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
        }, SLOW_MS);
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("a request in flight when stdin ends is answered before the bridge exits", async () => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let written = "";
    stdout.on("data", (c: Buffer) => {
      written += c.toString();
    });
    const endpoint = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
    const options = { endpoint, secret: "k", defaultBudgetMs: 5000, maxBudgetMs: 5000, logLevel: "silent" };
    const done = runMcpBridge(options, { env: {}, stdin, stdout, err: () => {} });
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "printf", version: "1" } },
    };
    stdin.end(`${JSON.stringify(initialize)}\n`);
    const started = Date.now();
    expect(await done).toBe(0);
    expect(Date.now() - started).toBeLessThan(5000);
    const answers = written
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(answers).toEqual([
      expect.objectContaining({ id: 1, result: expect.objectContaining({ protocolVersion: "2025-06-18" }) }),
    ]);
  });
});
