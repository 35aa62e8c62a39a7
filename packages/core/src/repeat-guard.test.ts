import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Cleanup } from "@tristate/testing";
import { afterEach, describe, expect, it } from "vitest";
import { closedOrigin } from "./classify/fixtures.ts";
import { classifyError, links } from "./classify/index.ts";
import { classifyInvokeFailure } from "./classify-invoke.ts";
import { invokeTracked } from "./invoke-tracker.ts";

// Issue 21 §2: what the invoke tracker refuses as a repeat, and what it lets through. Real loopback
// sockets; effects are the requests the server read.

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

async function server(): Promise<{ origin: string; seen: string[]; release: () => void }> {
  const seen: string[] = [];
  const held: http.ServerResponse[] = [];
  const s = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      seen.push(`${req.method} ${req.url}`);
      // `/busy…` answers 503 and `/limited…` 429 (what clients retry on); `/slow…` answers when told
      // (`release`); everything else 200.
      if (req.url?.startsWith("/slow")) held.push(res);
      else res.writeHead(req.url?.startsWith("/busy") ? 503 : req.url?.startsWith("/limited") ? 429 : 200).end("{}");
    });
  });
  s.keepAliveTimeout = 10_000;
  cleanup.server(s);
  s.listen(0, "127.0.0.1");
  await once(s, "listening");
  const release = () => {
    for (const res of held.splice(0)) res.end("{}");
  };
  return { origin: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, seen, release };
}

const post = (url: string, method = "POST") => fetch(url, { method, body: method === "GET" ? null : "{}" });

/** A node:http request on a keep-alive agent (the head of a second request goes out on the reused socket). */
function nodePost(url: string, agent: http.Agent): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", agent });
    req.on("error", reject);
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve());
    });
    req.end("{}");
  });
}

describe("the repeat guard (issue 21 §2)", () => {
  it("a second identical POST is refused before it is written; the remote sees one", async () => {
    const remote = await server();
    const attempt = await invokeTracked(
      async () => {
        await post(`${remote.origin}/busy/refunds`);
        await post(`${remote.origin}/busy/refunds`);
      },
      { refuseRepeats: true },
    );
    expect(remote.seen).toEqual(["POST /busy/refunds"]);
    expect(attempt).toMatchObject({ ok: false, writtenRequests: 1, repeats: { written: 0, refused: 1 } });
    if (attempt.ok) return;
    expect(links(attempt.error).some((l) => (l as Error).name === "RepeatRefusedError")).toBe(true);
    // From the error alone a refused repeat is never "not sent" (its code is no known code).
    expect(classifyError(attempt.error).outcome).toBe("UNKNOWN");
    // For the invoke: the one written request's answer (503) decides.
    expect(classifyInvokeFailure(attempt)).toMatchObject({ outcome: "UNKNOWN", code: "GATEWAY_5XX", httpStatus: 503 });
  });

  it("without the guard (an idempotent_by_key tool) the same two POSTs both reach the remote", async () => {
    const remote = await server();
    const attempt = await invokeTracked(async () => {
      await post(`${remote.origin}/busy/refunds`);
      await post(`${remote.origin}/busy/refunds`);
    });
    expect(remote.seen).toEqual(["POST /busy/refunds", "POST /busy/refunds"]);
    expect(attempt).toMatchObject({ ok: true, repeats: { guarded: false, written: 1 } });
  });

  it("lets through: GET repeats, POSTs to other targets, a POST after one answered 200 (GraphQL), a retry after a refused connection", async () => {
    const remote = await server();
    const closed = await closedOrigin();
    const attempt = await invokeTracked(
      async () => {
        await post(`${remote.origin}/orders/1`, "GET");
        await post(`${remote.origin}/orders/1`, "GET");
        await post(`${remote.origin}/payment_intents`);
        await post(`${remote.origin}/payment_intents/pi_1/confirm`);
        await post(`${remote.origin}/graphql`); // a query…
        await post(`${remote.origin}/graphql`); // …then a mutation, on one URL
        for (let i = 0; i < 2; i++) await post(`${closed}/refunds`).catch(() => undefined);
      },
      { refuseRepeats: true },
    );
    expect(remote.seen).toEqual([
      "GET /orders/1",
      "GET /orders/1",
      "POST /payment_intents",
      "POST /payment_intents/pi_1/confirm",
      "POST /graphql",
      "POST /graphql",
    ]);
    expect(attempt).toMatchObject({ ok: true, repeats: { written: 0, refused: 0 } });
  });

  it("node:http on a reused keep-alive socket: the repeat cannot be refused, and is counted as written", async () => {
    const remote = await server();
    const agent = new http.Agent({ keepAlive: true });
    cleanup.add(null, () => agent.destroy());
    const attempt = await invokeTracked(
      async () => {
        await nodePost(`${remote.origin}/busy/refunds`, agent);
        await nodePost(`${remote.origin}/busy/refunds`, agent);
        throw new Error("the tool gave up");
      },
      { refuseRepeats: true },
    );
    expect(remote.seen).toEqual(["POST /busy/refunds", "POST /busy/refunds"]);
    expect(attempt).toMatchObject({ ok: false, repeats: { written: 1, refused: 0 } });
    if (attempt.ok) return;
    const c = classifyInvokeFailure(attempt);
    expect(c).toMatchObject({ outcome: "UNKNOWN", code: "REPEATED_WRITE" });
    expect(c.message).toContain("possibly more than one effect");
    expect(c.message).toContain("#1 written, answered 503; #2 written, answered 503");
  });

  it("node:http on a new connection: the repeat is refused before its socket writes", async () => {
    const remote = await server();
    const attempt = await invokeTracked(
      async () => {
        for (let i = 0; i < 2; i++)
          await nodePost(`${remote.origin}/busy/refunds`, new http.Agent({ keepAlive: false }));
      },
      { refuseRepeats: true },
    );
    expect(remote.seen).toEqual(["POST /busy/refunds"]);
    expect(attempt).toMatchObject({ ok: false, repeats: { written: 0, refused: 1 } });
  });

  it("a nested invoke inside a guarded one is guarded too", async () => {
    const remote = await server();
    const attempt = await invokeTracked(
      async () => {
        await post(`${remote.origin}/busy/refunds`);
        const inner = await invokeTracked(() => post(`${remote.origin}/busy/refunds`));
        expect(inner.ok).toBe(false);
      },
      { refuseRepeats: true },
    );
    expect(remote.seen).toEqual(["POST /busy/refunds"]);
    expect(attempt.repeats).toMatchObject({ refused: 1 });
  });
});

describe("the repeat guard: what the one written request said decides (issue 21 §2)", () => {
  it("a 429 (refused before any work), its retry refused: FAILED_NO_EFFECT with the 429", async () => {
    const remote = await server();
    const attempt = await invokeTracked(
      async () => {
        for (let i = 0; i < 2; i++) {
          const res = await post(`${remote.origin}/limited/charges`);
          if (res.status !== 429) return;
        }
      },
      { refuseRepeats: true },
    );
    expect(remote.seen).toEqual(["POST /limited/charges"]);
    if (attempt.ok) throw new Error("expected the repeat to be refused");
    expect(classifyInvokeFailure(attempt)).toMatchObject({ outcome: "FAILED_NO_EFFECT", httpStatus: 429 });
  });

  it("a same-target POST beside one still in flight (an MCP cancel notification) is let through", async () => {
    const remote = await server();
    const attempt = await invokeTracked(
      async () => {
        const call = post(`${remote.origin}/slow/mcp`);
        while (remote.seen.length === 0) await new Promise((r) => setTimeout(r, 2));
        const cancel = post(`${remote.origin}/slow/mcp`);
        while (remote.seen.length < 2) await new Promise((r) => setTimeout(r, 2));
        remote.release();
        await Promise.all([call, cancel]);
      },
      { refuseRepeats: true },
    );
    expect(remote.seen).toEqual(["POST /slow/mcp", "POST /slow/mcp"]);
    expect(attempt).toMatchObject({ ok: true, repeats: { written: 0, refused: 0 } });
  });
});
