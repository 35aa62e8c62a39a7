/**
 * Issue 21 §1, transports: a declarative HTTP tool re-checks the call's deadline after its own wait
 * (the host policy's look-up) and never sends once the deadline has passed. Counted at the remote.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type AnyTool, Deadline, isNotSentError } from "@tristate/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCatalog } from "../src/catalog/load.ts";

let server: Server;
let posts = 0;
let tool: AnyTool;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      posts++;
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ result: "ok" }));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const [built] = await buildCatalog({
    httpTools: [
      {
        name: "notify",
        kind: "unsafe",
        method: "POST",
        // A name, not an address: the host policy looks it up before the request (a wait of the tool's own).
        url: `http://localhost:${port}/notify`,
        args: [{ name: "campaign", type: "string" }],
        identity: { campaign: "exact" },
        timeoutMs: 1500,
      },
    ],
    httpAllowHosts: ["localhost"],
  });
  if (!built) throw new Error("notify missing from the catalog");
  tool = built;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const invoke = (deadline: Deadline) =>
  tool.invoke(
    { campaign: "c-1" },
    {
      idempotencyKey: "k".repeat(32),
      // A signal that never aborts: the deadline alone must stop the send.
      signal: new AbortController().signal,
      timeoutMs: 1500,
      deadline,
      attempt: 1,
    },
  );

describe("an HTTP tool and the call's deadline", () => {
  it("past the deadline once its own waits are done: NotSentError DEADLINE_EXCEEDED, the remote gets nothing", async () => {
    const error = await invoke(Deadline.at(Date.now() - 1)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isNotSentError(error)).toBe(true);
    expect((error as { code?: string }).code).toBe("DEADLINE_EXCEEDED");
    expect(posts).toBe(0);
  });

  it("with time left it sends", async () => {
    await invoke(Deadline.after(10_000));
    expect(posts).toBe(1);
  });
});
