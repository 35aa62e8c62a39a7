/**
 * `intents.byIdentity` over HTTP on the real PostgreSQL (issue 22 §4, "what happened to order
 * A-1182?"): the caller's tenant only, the roles of the other reads, paging, and errors naming the field.
 */
import { ApiKeyStore } from "@tristate/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keysOf, refund as refundAs } from "./identity-search-support.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

let stack: TestStack;
const acme = { agent: "", viewer: "" };
const mine: string[] = [];
let theirs = "";

const refund = (key: string, runId: string, order: string) => refundAs(stack, key, runId, order, 12.5);

const search = (input: unknown, key: string | null = stack.keys.viewer) => stack.get("intents.byIdentity", input, key);

beforeAll(async () => {
  stack = await startStack();
  const store = new ApiKeyStore(stack.service.services.store.prisma);
  acme.agent = (await store.create({ name: "acme agent", role: "agent", tenant: "acme" })).secret;
  acme.viewer = (await store.create({ name: "acme viewer", role: "viewer", tenant: "acme" })).secret;
  mine.push(await refund(stack.keys.agent, "run-1", "a-1182"));
  mine.push(await refund(stack.keys.agent, "run-2", "A-1182"));
  await refund(stack.keys.agent, "run-3", "A-9999");
  theirs = await refund(acme.agent, "run-1", "A-1182");
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

describe("intents.byIdentity", () => {
  it("finds the tenant's records whose identity holds the value, newest first, with the field that matched", async () => {
    const res = await search({ value: " a-1182 " });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const data = res.json.result.data;
    expect(keysOf(res)).toEqual([...mine].reverse());
    expect(data.items.map((i: Json) => [i.tenant, i.tool, i.runId, i.matchedFields, i.archived, i.status])).toEqual([
      ["default", "issue_refund", "run-2", ["order_id"], false, "SUCCEEDED"],
      ["default", "issue_refund", "run-1", ["order_id"], false, "SUCCEEDED"],
    ]);
    expect(data.nextCursor).toBeNull();
    expect(data.forms).toEqual(["a-1182", "A-1182"]);
    // The amount's canonical form is 12.50: 12.5 finds all three of the tenant's records.
    expect(keysOf(await search({ value: "12.5" }))).toHaveLength(3);
    expect(keysOf(await search({ value: "A-1182", tool: "nothing" }))).toEqual([]);
  });

  it("pages with the cursor: every record once", async () => {
    const first = await search({ value: "A-1182", limit: 1 });
    expect(keysOf(first)).toEqual([mine[1]]);
    const second = await search({ value: "A-1182", limit: 1, cursor: first.json.result.data.nextCursor });
    expect(keysOf(second)).toEqual([mine[0]]);
    expect(second.json.result.data.nextCursor).toBeNull();
  });

  it("another tenant's record with the same value is never returned; admins see every tenant or the one named", async () => {
    expect(keysOf(await search({ value: "A-1182" }, acme.viewer))).toEqual([theirs]);
    expect(keysOf(await search({ value: "A-1182" }, stack.keys.operator))).not.toContain(theirs);
    const named = await search({ value: "A-1182", tenant: "acme" }, stack.keys.viewer);
    expect(named.status).toBe(403);
    expect(named.json.error.data.field).toBe("tenant");
    expect(keysOf(await search({ value: "A-1182" }, stack.keys.admin)).sort()).toEqual([...mine, theirs].sort());
    expect(keysOf(await search({ value: "A-1182", tenant: "acme" }, stack.keys.admin))).toEqual([theirs]);
  });

  it("roles: agents get 403, no key 401", async () => {
    expect((await search({ value: "A-1182" }, stack.keys.agent)).status).toBe(403);
    expect((await search({ value: "A-1182" }, null)).status).toBe(401);
  });

  it("bad input: 400 naming the field", async () => {
    const cases: [unknown, string][] = [
      [{}, "value"],
      [{ value: "   " }, "value"],
      [{ value: "x".repeat(201) }, "value"],
      [{ value: "x", limit: 0 }, "limit"],
      [{ value: "x", limit: 101 }, "limit"],
      [{ value: "x", cursor: "forged" }, "cursor"],
    ];
    for (const [input, field] of cases) {
      const res = await search(input);
      expect(res.status, JSON.stringify(input)).toBe(400);
      expect(res.json.error.data.field, JSON.stringify(res.json)).toBe(field);
    }
    const unknown = await search({ value: "x", order: "A-1182" });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.json.error)).toContain("order");
  });
});
