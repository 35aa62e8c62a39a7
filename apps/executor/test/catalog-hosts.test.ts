/**
 * `httpAllowHosts` (issue 10): an optional allowlist of the hosts a catalog's declarative HTTP tools
 * may call, checked when the catalog loads and, after DNS resolution, before every request; a host
 * that only a wildcard allows is refused when it is or resolves to a non-public address (loopback,
 * private, link-local, …). End to end against a loopback remote with the system resolver, and with a
 * scripted resolver for names that point inside the network.
 */
import { once } from "node:events";
import { mkdtemp, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  callHttp,
  classifyError,
  createExecutor,
  Deadline,
  MemoryIntentStore,
  type ProbeContext,
} from "@tristate/core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hostPolicy, nonPublicRange, type Resolve } from "../src/catalog/http-tool/host-policy.ts";
import { httpTool } from "../src/catalog/http-tool.ts";
import { buildCatalog, CatalogError, loadCatalog } from "../src/catalog/load.ts";

let server: Server;
let port: number;
const seen: string[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(req.method === "GET" ? [] : { result: "ok" }));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen.length = 0;
});

const notifyDecl = (origin: string, over: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: "notify",
  kind: "unsafe",
  method: "POST",
  url: `${origin}/notify`,
  args: [{ name: "campaign", type: "string" }],
  identity: { campaign: "exact" },
  timeoutMs: 1500,
  ...over,
});

let step = 0;
async function call(declaration: Record<string, unknown>, httpAllowHosts: string[]) {
  const tools = await buildCatalog({ httpTools: [declaration], httpAllowHosts });
  const ex = createExecutor({ store: new MemoryIntentStore(), tools });
  return ex.call({
    runId: "run-hosts",
    stepId: `step-${++step}`,
    tool: "notify",
    args: { campaign: "spring" },
    deadline: Deadline.after(20_000),
  });
}

async function loadError(catalog: Parameters<typeof buildCatalog>[0]): Promise<string> {
  const error = await buildCatalog(catalog).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CatalogError);
  return (error as Error).message;
}

describe("httpAllowHosts end to end (system resolver, loopback remote)", () => {
  it("a host the list does not name is refused when the catalog loads", async () => {
    const decl = notifyDecl(`http://127.0.0.1:${port}`);
    expect(await loadError({ httpTools: [decl], httpAllowHosts: ["payments.internal"] })).toBe(
      'catalog: tool "notify": url: host "127.0.0.1" is not in httpAllowHosts (httpAllowHosts: "payments.internal")',
    );
    const probe = { url: `http://localhost:${port}/n?ref={key}`, found: { type: "non_empty_array" } };
    expect(
      await loadError({ httpTools: [{ ...decl, keyProbe: probe }], httpAllowHosts: ["127.0.0.1", "*.example.com"] }),
    ).toBe(
      'catalog: tool "notify": keyProbe.url: host "localhost" is not in httpAllowHosts (httpAllowHosts: "127.0.0.1", "*.example.com")',
    );
  });

  it('"*" refuses a loopback or private IP host at load, integer forms (2130706433) included', async () => {
    const message = (origin: string) => loadError({ httpTools: [notifyDecl(origin)], httpAllowHosts: ["*"] });
    const loopback =
      'catalog: tool "notify": url: host "127.0.0.1" is a loopback address, which httpAllowHosts allows only when it lists it exactly (httpAllowHosts: "*")';
    expect(await message(`http://127.0.0.1:${port}`)).toBe(loopback);
    expect(await message(`http://2130706433:${port}`)).toBe(loopback);
    expect(await message(`http://0x7f.1:${port}`)).toBe(loopback);
    expect(await message("http://169.254.169.254")).toContain('host "169.254.169.254" is a link-local address');
    expect(await message("http://[::1]:4730")).toContain('host "[::1]" is a loopback address');
    expect(await message("http://[::ffff:10.0.0.1]")).toContain("is a private address");
  });

  it('"*": a name that resolves to loopback is refused before sending → FAILED_NO_EFFECT, nothing sent', async () => {
    const envelope = await call(notifyDecl(`http://localhost:${port}`), ["*"]);
    expect(envelope).toMatchObject({
      status: "FAILED_NO_EFFECT",
      retry_safe: true,
      error: { code: "INVALID_ARGUMENTS" },
    });
    expect(envelope.error?.message).toMatch(
      new RegExp(
        `^NotSentError: notify: POST http://localhost:${port}/notify: host "localhost" resolves to (127\\.0\\.0\\.1|::1), a loopback address; ` +
          "httpAllowHosts allows non-public addresses only for a host it lists exactly; not sent$",
      ),
    );
    expect(seen).toEqual([]);
  });

  it("the exact host listed is called whatever it resolves to; 2130706433 is 127.0.0.1", async () => {
    expect((await call(notifyDecl(`http://localhost:${port}`), ["*", "localhost"])).status).toBe("SUCCEEDED");
    expect((await call(notifyDecl(`http://127.0.0.1:${port}`), ["127.0.0.1"])).status).toBe("SUCCEEDED");
    expect((await call(notifyDecl(`http://2130706433:${port}`), ["127.0.0.1"])).status).toBe("SUCCEEDED");
    expect((await call(notifyDecl(`http://127.0.0.1:${port}`), ["2130706433"])).status).toBe("SUCCEEDED");
    expect(seen).toEqual(["POST /notify", "POST /notify", "POST /notify", "POST /notify"]);
  });

  it("without httpAllowHosts every host the catalog names is called (as before)", async () => {
    const tools = await buildCatalog({ httpTools: [notifyDecl(`http://localhost:${port}`)] });
    expect(tools).toHaveLength(1);
  });

  it("a JSON catalog may set httpAllowHosts; a file listed in httpToolFiles may not", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tristate-hosts-"));
    const top = join(dir, "catalog.json");
    await writeFile(
      top,
      JSON.stringify({ httpTools: [notifyDecl("http://api.example.com")], httpAllowHosts: ["x.io"] }),
    );
    await expect(loadCatalog(top)).rejects.toThrow(
      'catalog: tool "notify": url: host "api.example.com" is not in httpAllowHosts (httpAllowHosts: "x.io")',
    );
    const part = join(dir, "part.json");
    await writeFile(part, JSON.stringify({ httpTools: [], httpAllowHosts: ["*"] }));
    await expect(buildCatalog({ httpToolFiles: ["part.json"] }, dir)).rejects.toThrow(
      `catalog: httpAllowHosts: unknown field in ${part} (expected "httpTools"; httpAllowHosts belongs to the catalog)`,
    );
  });

  it("bad entries are refused with the entry named", async () => {
    const rule = (got: string) =>
      `catalog: httpAllowHosts.0: must be a host name or IP address ("payments.internal", "10.0.0.7", "::1"), "*.<domain>" or "*"; got ${got}`;
    for (const entry of ["http://x.io/", "x.io:443", "", "user@x.io", "*.10.0.0.1", "a*.x.io", "x.io/path"]) {
      expect(await loadError({ httpAllowHosts: [entry] })).toBe(rule(JSON.stringify(entry)));
    }
    expect(await loadError({ httpAllowHosts: [5] as unknown as string[] })).toBe(rule("5"));
    expect(await loadError({ httpAllowHosts: "x.io" as unknown as string[] })).toBe(
      'catalog: httpAllowHosts: must be a list of hosts ("payments.internal", "10.0.0.7", "*.example.com", "*")',
    );
  });
});

/** A resolver that answers from a table (names pointing inside the network) and counts lookups. */
function scripted(table: Record<string, string[]>): Resolve & { asked: string[] } {
  const asked: string[] = [];
  const resolve = async (host: string) => {
    asked.push(host);
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address }));
  };
  return Object.assign(resolve, { asked });
}

describe("httpAllowHosts with names that resolve inside the network (scripted resolver)", () => {
  const resolver = scripted({
    "api.partner.example": ["93.184.216.34"],
    "evil.partner.example": ["10.0.0.5"],
    "mixed.partner.example": ["93.184.216.34", "fd00::5"],
    "meta.partner.example": ["169.254.169.254"],
    "db.partner.example": ["10.0.0.6"],
  });
  const policy = hostPolicy(["*.partner.example", "db.partner.example"], resolver);
  const check = (url: string) => policy?.check(url, "notify: POST");

  it("a wildcard host resolving to public addresses passes; to any non-public address it is refused", async () => {
    await expect(check("https://api.partner.example/x")).resolves.toBeUndefined();
    await expect(check("https://evil.partner.example/x")).rejects.toMatchObject({
      name: "NotSentError",
      code: "INVALID_ARGUMENTS",
      message:
        'notify: POST: host "evil.partner.example" resolves to 10.0.0.5, a private address; httpAllowHosts allows non-public addresses only for a host it lists exactly; not sent',
    });
    await expect(check("https://mixed.partner.example/x")).rejects.toThrow(
      'host "mixed.partner.example" resolves to fd00::5, a unique-local address',
    );
    await expect(check("https://meta.partner.example/x")).rejects.toThrow("resolves to 169.254.169.254, a link-local");
  });

  it("an exact entry is trusted without resolving; the wildcard does not cover the domain itself", async () => {
    const before = resolver.asked.length;
    await expect(check("https://db.partner.example/x")).resolves.toBeUndefined();
    expect(resolver.asked.length).toBe(before);
    await expect(check("https://partner.example/x")).rejects.toThrow(
      'notify: POST: host "partner.example" is not in the catalog\'s httpAllowHosts; not sent',
    );
  });

  it("DNS rebinding: a name checked public that resolves to loopback when connecting is refused in the connect itself; nothing reaches the inside", async () => {
    let lookups = 0;
    // The attacker's DNS answers a public address for the check, then 127.0.0.1 (our loopback remote).
    const rebinding: Resolve = async () => [{ address: lookups++ === 0 ? "93.184.216.34" : "127.0.0.1" }];
    const rebind = hostPolicy(["*.partner.example"], rebinding)!;
    const url = `http://rebind.partner.example:${port}/notify`;
    await expect(rebind.check(url, "notify: POST")).resolves.toBeUndefined();
    const dispatcher = rebind.dispatcher(url);
    expect(dispatcher).toBeDefined();
    const error = await callHttp({ timeoutMs: 1500 }, { method: "POST", url, body: { x: 1 }, dispatcher }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(seen).toStrictEqual([]);
    expect(lookups).toBe(2);
    expect(classifyError(error)).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "INVALID_ARGUMENTS" });
    expect(String(classifyError(error).message)).toContain(
      "resolves to 127.0.0.1, a loopback address, at connect time",
    );
    // Exact entries and IP hosts need no pinning: they are called whatever they resolve to.
    expect(hostPolicy(["db.partner.example"], rebinding)!.dispatcher("http://db.partner.example/x")).toBeUndefined();
  });

  it("a host that does not resolve is NOT_SENT; an aborted resolution is DEADLINE_EXCEEDED", async () => {
    await expect(check("https://gone.partner.example/x")).rejects.toMatchObject({
      name: "NotSentError",
      code: "NOT_SENT",
      message: 'notify: POST: host "gone.partner.example" does not resolve (ENOTFOUND); not sent',
    });
    const slow = hostPolicy(["*"], () => new Promise(() => {}));
    await expect(slow?.check("https://x.io/", "p", AbortSignal.abort())).rejects.toMatchObject({
      code: "DEADLINE_EXCEEDED",
    });
  });

  it("probes are checked too: a steered probe host is refused before any GET", async () => {
    const tool = httpTool(
      notifyDecl("https://api.partner.example", {
        identityProbe: { url: "https://evil.partner.example/n?since={since}", found: { type: "non_empty_array" } },
      }),
      0,
      { hosts: policy },
    );
    const ctx: ProbeContext = {
      clientRef: "k",
      signal: new AbortController().signal,
      timeoutMs: 1000,
      sinceEpochMs: 1,
    };
    await expect(tool.probeByIdentity?.({ campaign: "spring" }, ctx)).rejects.toMatchObject({
      name: "NotSentError",
      code: "INVALID_ARGUMENTS",
      message: expect.stringContaining('identity probe GET https://evil.partner.example/n?since=1: host "evil'),
    });
  });
});

describe("non-public ranges (node:net BlockList)", () => {
  it("names the range of loopback, private, link-local, unique-local and other special addresses", () => {
    const cases: [string, string | null][] = [
      ["127.0.0.1", "loopback"],
      ["127.255.0.9", "loopback"],
      ["::1", "loopback"],
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:7f00:1", "loopback"],
      ["10.1.2.3", "private"],
      ["172.16.0.1", "private"],
      ["172.31.255.255", "private"],
      ["192.168.1.1", "private"],
      ["169.254.169.254", "link-local"],
      ["fe80::1", "link-local"],
      ["fc00::1", "unique-local"],
      ["fd12:3456::1", "unique-local"],
      ["0.0.0.0", "unspecified"],
      ["::", "unspecified"],
      ["100.64.0.1", "shared (carrier-grade NAT)"],
      ["224.0.0.1", "multicast or reserved"],
      ["64:ff9b::a00:1", "IPv6 transition (NAT64, 6to4, Teredo)"],
      ["not an address", "unparsable"],
      ["172.32.0.1", null],
      ["8.8.8.8", null],
      ["93.184.216.34", null],
      ["2606:4700:4700::1111", null],
      ["::ffff:8.8.8.8", null],
    ];
    expect(cases.map(([address]) => [address, nonPublicRange(address)])).toEqual(cases);
  });
});
