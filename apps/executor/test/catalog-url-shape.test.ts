/**
 * Declarative HTTP tools and SSRF (issue 10): the scheme, host and port of every URL come from the
 * catalog only, and no argument value can change a URL's shape — not its path (`.`, `..`, their
 * percent-encoded forms, `/`, `\`, `?`, `#`), not its query (`&`, `#`), not a probe's URL. End to
 * end through the executor against a loopback remote that records every request it receives.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createExecutor, Deadline, MemoryIntentStore, type ProbeContext } from "@tristate/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildCatalog, CatalogError } from "../src/catalog/load.ts";

/** The remote: records `METHOD raw-url` of every request; answers with `answer`. */
let server: Server;
let base: string;
const seen: string[] = [];
let answer: (method: string, path: string) => { status: number; body: unknown } = () => ({
  status: 200,
  body: { result: "ok" },
});
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      seen.push(`${req.method} ${req.url}`);
      const { status, body } = answer(req.method ?? "", new URL(req.url ?? "/", "http://x").pathname);
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen.length = 0;
  answer = () => ({ status: 200, body: { result: "ok" } });
});

const notifyDecl = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: "notify_customer",
  kind: "unsafe",
  method: "POST",
  url: `${base}/customers/{customer_id}/notify`,
  args: [{ name: "customer_id", type: "string" }],
  identity: { customer_id: "exact" },
  loggableFields: ["customer_id"],
  timeoutMs: 1500,
  ...over,
});

let step = 0;
async function call(declaration: Record<string, unknown>, args: Record<string, unknown>) {
  const store = new MemoryIntentStore();
  const tools = await buildCatalog({ httpTools: [declaration] });
  const ex = createExecutor({ store, tools, probe: { attempts: 1, spacingMs: 0, timeoutMs: 2000 } });
  return ex.call({
    runId: "run-ssrf",
    stepId: `step-${++step}`,
    tool: declaration.name as string,
    args,
    deadline: Deadline.after(20_000),
  });
}

async function refusedAtLoad(declaration: Record<string, unknown>): Promise<string> {
  const error = await buildCatalog({ httpTools: [declaration] }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CatalogError);
  return (error as Error).message;
}

describe("the scheme, host and port come from the catalog only", () => {
  const rule =
    "the scheme, user, host and port come from the catalog only; placeholders may fill the path and the query";
  const args = [
    { name: "host", type: "string" },
    { name: "port", type: "string" },
    { name: "scheme", type: "string" },
    { name: "pw", type: "string" },
  ];
  const ping = (over: Record<string, unknown>) =>
    notifyDecl({ name: "ping", args, identity: { host: "exact" }, loggableFields: [], ...over });

  it("a placeholder in the host, port, scheme or user info of url is refused when the catalog loads", async () => {
    const cases: [string, string][] = [
      ["http://{host}:4730/ping", '{host} is in the URL\'s scheme or authority ("http://{host}:4730")'],
      ["http://x.example:{port}/", '{port} is in the URL\'s scheme or authority ("http://x.example:{port}")'],
      ["{scheme}://x.example/ping", '{scheme} is in the URL\'s scheme or authority ("{scheme}://x.example")'],
      ["http://user:{pw}@h/", '{pw} is in the URL\'s scheme or authority ("http://user:{pw}@h")'],
      ["http://{host}", '{host} is in the URL\'s scheme or authority ("http://{host}")'],
      ["http://api.{host}/ping", '{host} is in the URL\'s scheme or authority ("http://api.{host}")'],
      // Without "//" the WHATWG parser still reads `http:{host}/x` as host {host}.
      ["http:{host}/ping", '{host} is in the URL\'s scheme or authority ("http:{host}")'],
      ["{host}/ping", '{host} is in the URL\'s scheme or authority ("{host}")'],
    ];
    for (const [url, message] of cases) {
      expect(await refusedAtLoad(ping({ url }))).toBe(`catalog: tool "ping": url: ${message}: ${rule}`);
    }
  });

  it("the probes' URLs too, with the field named", async () => {
    expect(
      await refusedAtLoad(
        ping({
          url: `${base}/ping`,
          keyProbe: { url: "http://{host}/effects?ref={key}", found: { type: "non_empty_array" } },
        }),
      ),
    ).toBe(`catalog: tool "ping": keyProbe.url: {host} is in the URL's scheme or authority ("http://{host}"): ${rule}`);
    expect(
      await refusedAtLoad(
        ping({
          url: `${base}/ping`,
          identityProbe: { url: "http://x.example:{port}/s?since={since}", found: { type: "non_empty_array" } },
        }),
      ),
    ).toBe(
      `catalog: tool "ping": identityProbe.url: {port} is in the URL's scheme or authority ("http://x.example:{port}"): ${rule}`,
    );
  });

  it("a URL that is not literally http(s)://host is refused; placeholders in the path and query are fine", async () => {
    expect(await refusedAtLoad(ping({ url: "http:/x.example/{host}" }))).toBe(
      'catalog: tool "ping": url: must be an absolute http(s) URL template, got "http:/x.example/{host}"',
    );
    expect(await buildCatalog({ httpTools: [ping({ url: `${base}/ping/{host}?port={port}` })] })).toHaveLength(1);
  });
});

describe("argument values cannot change the path", () => {
  it('Node\'s URL parser collapses "..", "%2E%2E" and ".%2e" alike: encoding cannot save them, so they are refused', () => {
    for (const dots of ["..", "%2E%2E", ".%2e", "%2e."]) {
      expect(new URL(`http://h/customers/${dots}/notify`).pathname).toBe("/notify");
    }
    expect(new URL("http://h/customers/%2E/notify").pathname).toBe("/customers/notify");
  });

  it('".", ".." and "" as a whole segment are refused at validation, field named; nothing is sent', async () => {
    for (const customer_id of ["..", ".", ""]) {
      const envelope = await call(notifyDecl(), { customer_id });
      expect(envelope).toMatchObject({
        status: "FAILED_NO_EFFECT",
        error: {
          code: "INVALID_ARGUMENTS",
          field: "customer_id",
          rule: 'must not be ".", ".." or empty: it is a whole path segment of the URL, whose path it would change',
        },
      });
    }
    expect(seen).toEqual([]);
  });

  it("encoded dots, slashes, backslashes, ? and # stay inside their segment: the path keeps its shape", async () => {
    const values = [
      "%2E%2E",
      "%2e",
      ".%2E",
      "../notify",
      "..\\",
      "\\..",
      "a/../..",
      "..;",
      "?x=1",
      "#top",
      "a..b",
      ".env",
    ];
    for (const customer_id of values) {
      const envelope = await call(notifyDecl(), { customer_id });
      expect(envelope.status).toBe("SUCCEEDED");
    }
    expect(seen).toEqual(values.map((v) => `POST /customers/${encodeURIComponent(v)}/notify`));
    // The remote reads back exactly the value the agent gave, as one segment.
    const decoded = seen.map((s) => decodeURIComponent(s.split("/")[2] ?? ""));
    expect(decoded).toEqual(values);
  });

  it('several placeholders making one segment ".." are refused before sending, naming them', async () => {
    const decl = notifyDecl({
      url: `${base}/customers/{prefix}{customer_id}/notify`,
      args: [
        { name: "prefix", type: "string" },
        { name: "customer_id", type: "string" },
      ],
    });
    const envelope = await call(decl, { prefix: ".", customer_id: "." });
    expect(envelope).toMatchObject({ status: "FAILED_NO_EFFECT", error: { code: "INVALID_ARGUMENTS" } });
    expect(envelope.error?.message).toContain(
      `notify_customer: POST ${base}/customers/{prefix}{customer_id}/notify: {prefix}{customer_id} would make a path segment ".", ".." or empty, which changes the path; not sent`,
    );
    expect(seen).toEqual([]);
    const fine = await call(decl, { prefix: "%2E", customer_id: "%2E" });
    expect(fine.status).toBe("SUCCEEDED");
    expect(seen).toEqual(["POST /customers/%252E%252E/notify"]);
  });

  it("query values cannot add parameters or a fragment", async () => {
    const decl = notifyDecl({ url: `${base}/customers/search?q={customer_id}&limit=5` });
    const envelope = await call(decl, { customer_id: "x&limit=500&admin=1#frag" });
    expect(envelope.status).toBe("SUCCEEDED");
    expect(seen).toHaveLength(1);
    const query = new URL(seen[0]?.split(" ")[1] ?? "", "http://x").searchParams;
    expect([...query]).toEqual([
      ["q", "x&limit=500&admin=1#frag"],
      ["limit", "5"],
    ]);
  });
});

describe("a probe cannot be steered", () => {
  /**
   * `POST /notify` (the customer travels in the body) times out on the first call, and an identity
   * probe looks the notification up under `/customers/{prefix}{customer_id}/notifications`. Steered
   * to `/notifications`, it would find someone else's notification and settle the call SUCCEEDED.
   */
  const probed = () =>
    notifyDecl({
      url: `${base}/notify`,
      args: [
        { name: "prefix", type: "string" },
        { name: "customer_id", type: "string" },
      ],
      identity: { prefix: "exact", customer_id: "exact" },
      identityProbe: {
        url: `${base}/customers/{prefix}{customer_id}/notifications?since={since}`,
        found: { type: "non_empty_array" },
      },
      keyProbe: {
        url: `${base}/customers/{prefix}{customer_id}/notifications?ref={key}`,
        found: { type: "non_empty_array" },
      },
    });
  beforeEach(() => {
    answer = (method, path) => {
      if (method === "POST") return { status: 503, body: { error: "timeout upstream" } };
      // Someone else's notification at the steered URL; nothing under the customer's own.
      return { status: 200, body: path === "/notifications" ? [{ id: "n-other", to: "someone else" }] : [] };
    };
  });

  it("an UNKNOWN call whose identity probe a value would steer stays UNKNOWN: the probe is refused, not sent", async () => {
    const envelope = await call(probed(), { prefix: ".", customer_id: "." });
    expect(envelope.status).toBe("UNKNOWN");
    expect(seen.filter((s) => s.startsWith("POST"))).toEqual(["POST /notify"]);
    expect(seen.some((s) => s.startsWith("GET /notifications"))).toBe(false);
    expect(seen.filter((s) => s.startsWith("GET"))).toEqual([]);
  });

  it("the same call with an ordinary value is probed at the customer's own URL", async () => {
    const envelope = await call(probed(), { prefix: "c-", customer_id: "42" });
    expect(envelope.status).toBe("UNKNOWN");
    expect(seen.some((s) => s.startsWith("GET /customers/c-42/notifications?"))).toBe(true);
  });

  it("the probes themselves refuse a steering value (what a stored record could hold) before any GET", async () => {
    // The key probe names the customer as a whole segment, so a call is refused at validation; a
    // stored record's arguments reach the probe without that validation.
    const keyProbe = {
      url: `${base}/customers/{customer_id}/notifications?ref={key}`,
      found: { type: "non_empty_array" },
    };
    const [tool] = await buildCatalog({ httpTools: [{ ...probed(), keyProbe }] });
    const ctx: ProbeContext = {
      clientRef: "0123456789abcdef0123456789abcdef",
      signal: new AbortController().signal,
      timeoutMs: 2000,
      sinceEpochMs: 1,
    };
    const byKey = tool?.probe?.({ prefix: "c-", customer_id: ".." }, ctx);
    await expect(byKey).rejects.toMatchObject({ name: "NotSentError", code: "INVALID_ARGUMENTS" });
    await expect(byKey).rejects.toThrow(
      `key probe GET ${base}/customers/{customer_id}/notifications?ref={key}: {customer_id} would make a path segment ".", ".." or empty, which changes the path; not sent`,
    );
    const byIdentity = tool?.probeByIdentity?.({ prefix: "", customer_id: ".." }, ctx);
    await expect(byIdentity).rejects.toMatchObject({ name: "NotSentError", code: "INVALID_ARGUMENTS" });
    expect(seen).toEqual([]);
  });
});
