/**
 * Attacks on issue 22's new read surfaces over HTTP on the real PostgreSQL: `intents.byIdentity`
 * (its value becomes a SQL/JSON path literal; its cursor is client-held), the request id a caller
 * sends (`X-Request-Id`), and the unknown-key message (after the auth check, never before).
 * Invariants: a search finds only the caller's records whose identity holds exactly the value (no
 * injected condition widens it, no other tenant's record), bad input is a 400 naming the field (never
 * a 500), a value held by every record is still one bounded page; a request id that is not plain
 * printable ASCII never reaches the answer's header or the log.
 */
import net from "node:net";
import { Writable } from "node:stream";
import { ApiKeyStore, archiveIntents } from "@tristate/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/logger.ts";
import { keysOf, refund as refundAs } from "./identity-search-support.ts";
import { startStack, type TestStack } from "./support.ts";

let stack: TestStack;
const acme = { agent: "", viewer: "" };
/** Hostile order ids, each held by one record of the default tenant (stored upper case). */
const HOSTILE = [
  'X" || @ == "A-1',
  "X\\",
  'X\\" || @ like_regex ".*',
  "X') OR 1=1 --",
  "$.*",
  "X\\u0041",
  "X$",
  "<IMG SRC=X ONERROR=ALERT(1)>",
];
/** Keys of the default tenant's records by order id. */
const byOrder = new Map<string, string>();
let acmeKey = "";
const lines: Record<string, unknown>[] = [];

const refund = (key: string, runId: string, order: string) => refundAs(stack, key, runId, order, 7);

const search = (input: unknown, key: string | null = stack.keys.viewer) => stack.get("intents.byIdentity", input, key);

beforeAll(async () => {
  stack = await startStack();
  const store = new ApiKeyStore(stack.service.services.store.prisma);
  acme.agent = (await store.create({ name: "acme agent", role: "agent", tenant: "acme" })).secret;
  acme.viewer = (await store.create({ name: "acme viewer", role: "viewer", tenant: "acme" })).secret;
  for (const [i, order] of HOSTILE.entries()) byOrder.set(order, await refund(stack.keys.agent, `run-h${i}`, order));
  byOrder.set("A-1", await refund(stack.keys.agent, "run-a1", "A-1"));
  acmeKey = await refund(acme.agent, "run-acme", "A-1");
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  stack.service.services.logger = createLogger("debug", sink);
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

describe("intents.byIdentity: the value is a literal, never a path", () => {
  it("each hostile order id finds exactly its own record; nothing else matches", async () => {
    for (const order of HOSTILE) {
      const res = await search({ value: order });
      expect(res.status, `${order}: ${JSON.stringify(res.json)}`).toBe(200);
      expect(keysOf(res), order).toEqual([byOrder.get(order)]);
    }
  });

  it("values that would widen an unescaped path match nothing, and none is a 500", async () => {
    const values = [
      '"',
      "\\",
      '" || exists($.*) || "',
      '") || (@ like_regex ".*',
      "' || '",
      "$",
      "@",
      "\\u0022",
      "\u202e\u0000".slice(0, 1),
      "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ☃ é",
      "1e400",
      "NaN",
      "Infinity",
      "true",
      "null",
      "x".repeat(200),
      "%",
      "_",
    ];
    for (const value of values) {
      const res = await search({ value });
      expect(res.status, `${JSON.stringify(value)}: ${JSON.stringify(res.json)}`).toBe(200);
      expect(keysOf(res), JSON.stringify(value)).toEqual([]);
    }
  });

  it("NUL and lone surrogates: 400 naming value", async () => {
    for (const value of ["A\u0000-1", "A-1\ud800"]) {
      const res = await search({ value });
      expect(res.status, JSON.stringify(res.json)).toBe(400);
      expect(res.json.error.data.field).toBe("value");
    }
  });

  it("a decimal with more places than an amount holds never matches a rounded amount", async () => {
    // Every record's amount is 7.00: 7.000…0001 (22 places) is another number.
    const res = await search({ value: `7.${"0".repeat(21)}1` });
    expect(res.status).toBe(200);
    expect(keysOf(res)).toEqual([]);
    expect(keysOf(await search({ value: `0.${"0".repeat(20)}1` }))).toEqual([]);
  });
});

describe("intents.byIdentity: tenancy and cursors", () => {
  it("a value both tenants hold: each viewer sees its own; archived records stay in their tenant", async () => {
    expect(keysOf(await search({ value: "a-1" }))).toEqual([byOrder.get("A-1")]);
    expect(keysOf(await search({ value: "a-1" }, acme.viewer))).toEqual([acmeKey]);
    const prisma = stack.service.services.store.prisma;
    expect((await archiveIntents(prisma, { olderThanEpochMs: Date.now() + 3_600_000 })).moved).toBeGreaterThan(0);
    const mine = await search({ value: "a-1" });
    expect(keysOf(mine)).toEqual([byOrder.get("A-1")]);
    expect(mine.json.result.data.items[0].archived).toBe(true);
    expect(keysOf(await search({ value: "a-1" }, acme.viewer))).toEqual([acmeKey]);
    expect(keysOf(await search({ value: "a-1", tenant: "acme" }, stack.keys.admin))).toEqual([acmeKey]);
    expect((await search({ value: "a-1", tenant: "acme" }, stack.keys.operator)).status).toBe(403);
  });

  it("another tenant's cursor pages the caller's own records only", async () => {
    // A cursor built from acme's record (created last): the default viewer still sees only its own.
    const cursor = Buffer.from(JSON.stringify([Date.now() + 60_000, acmeKey])).toString("base64url");
    const res = await search({ value: "7", cursor });
    expect(res.status).toBe(200);
    expect(keysOf(res).sort()).toEqual([...byOrder.values()].sort());
  });

  it("a tampered cursor is a 400 naming cursor, never a 500", async () => {
    const forged = [
      [1e20, "k"],
      [8.64e15 + 1, "k"],
      [Number.MAX_SAFE_INTEGER, "k"],
      [0, "k\u0000"],
      [0, "\ud800"],
      [-1, "k"],
      [1.5, "k"],
      ["0", "k"],
      [0, 1],
      { a: 1 },
    ];
    for (const value of forged) {
      const cursor = Buffer.from(JSON.stringify(value)).toString("base64url");
      const res = await search({ value: "7", cursor });
      expect(res.status, `${JSON.stringify(value)}: ${JSON.stringify(res.json)}`).toBe(400);
      expect(res.json.error.data.field).toBe("cursor");
    }
  });

  it("a value every record holds: one bounded page, quickly", async () => {
    const started = performance.now();
    const res = await search({ value: "7", limit: 2 });
    expect(res.status).toBe(200);
    expect(keysOf(res)).toHaveLength(2);
    expect(res.json.result.data.nextCursor).toEqual(expect.any(String));
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

/** Sends raw header bytes (no client-side validation); returns the answer's head. */
function rawGet(path: string, headerLine: Buffer): Promise<string> {
  const { port } = new URL(stack.service.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), "127.0.0.1");
    let got = "";
    socket.on("data", (d) => {
      got += d.toString("latin1");
      if (got.includes("\r\n\r\n")) {
        socket.destroy();
        resolve(got.slice(0, got.indexOf("\r\n\r\n")));
      }
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(got));
    socket.write(
      Buffer.concat([
        Buffer.from(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n`, "latin1"),
        headerLine,
        Buffer.from("\r\n\r\n", "latin1"),
      ]),
    );
  });
}

describe("X-Request-Id: only plain printable ASCII is echoed or logged", () => {
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  const hostile: [string, Buffer][] = [
    ["ANSI escape", Buffer.from("X-Request-Id: abc\x1b[31mred\x1b[0m", "latin1")],
    ["bare LF (header split)", Buffer.from("X-Request-Id: abc\nSet-Cookie: s=1", "latin1")],
    ["bare CR", Buffer.from("X-Request-Id: abc\rSet-Cookie: s=1", "latin1")],
    ["UTF-8 bytes", Buffer.concat([Buffer.from("X-Request-Id: ", "latin1"), Buffer.from("ïd-☃", "utf8")])],
    ["201 characters", Buffer.from(`X-Request-Id: ${"r".repeat(201)}`, "latin1")],
  ];
  for (const [name, header] of hostile) {
    it(`${name}: a fresh UUID in the header and the log, nothing of the caller's`, async () => {
      lines.length = 0;
      const head = await rawGet("/trpc/tools.list", header);
      if (!head.startsWith("HTTP/1.1 400")) {
        // Accepted by the parser: the id must be replaced.
        const id = /\r\nx-request-id: ([^\r\n]*)/i.exec(head)?.[1] ?? "";
        expect(id, head).toMatch(UUID);
        expect(head.toLowerCase()).not.toContain("set-cookie");
        const logged = lines.map((l) => l.request_id).filter((v) => v !== undefined);
        for (const v of logged) expect(v).toMatch(UUID);
      }
      expect(JSON.stringify(lines)).not.toMatch(/red|Set-Cookie|☃|r{201}/);
    });
  }
});

it("X-Request-Id given twice: Node joins them ('a, b'), still one printable line", async () => {
  const head = await rawGet("/trpc/tools.list", Buffer.from("X-Request-Id: a\r\nX-Request-Id: b", "latin1"));
  expect(/\r\nx-request-id: ([^\r\n]*)/i.exec(head)?.[1]).toMatch(/^[\x20-\x7e]{1,200}$/);
});

describe("unknown keys: the auth check comes first, and the message lists only the input's keys", () => {
  it("no key: 401 and no key list; a role that may not call it: 403 and no key list", async () => {
    const none = await stack.post("keys.create", { name: "x", role: "agent", bogus: 1 }, null);
    expect(none.status).toBe(401);
    expect(JSON.stringify(none.json)).not.toMatch(/bogus|allowed|tenant/);
    const viewer = await stack.post("keys.create", { name: "x", role: "agent", bogus: 1 }, stack.keys.viewer);
    expect(viewer.status).toBe(403);
    expect(JSON.stringify(viewer.json)).not.toMatch(/bogus|allowed/);
    const agentRead = await search({ value: "a", bogus: 1 }, stack.keys.agent);
    expect(agentRead.status).toBe(403);
    expect(JSON.stringify(agentRead.json)).not.toMatch(/bogus|cursor|limit/);
  });

  it("an allowed caller's unknown key: 400 naming it and the allowed keys, with no secret value", async () => {
    const res = await stack.post("keys.create", { name: "x", role: "agent", bogus: 1 }, stack.keys.admin);
    expect(res.status).toBe(400);
    const text = JSON.stringify(res.json.error);
    expect(text).toContain("bogus");
    expect(text).not.toContain(stack.keys.admin);
  });
});
