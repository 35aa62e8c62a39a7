import { randomUUID } from "node:crypto";
import { ApiKeyStore, createTestDatabase, type TestDatabase } from "@tristate/db";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEnv } from "../src/env.ts";
import { type RunningService, startService } from "../src/service.ts";
import type { AppRouter } from "../src/trpc/router.ts";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers of the API
type Json = any;

describe("operator actions over real HTTP on the real PostgreSQL (queue.*, audit.list, probe.rerun)", () => {
  let db: TestDatabase;
  let remote: FakeRemote;
  let service: RunningService;
  const keys = { agent: "", viewer: "", ana: "", bo: "" };
  let step = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    remote = await startFakeRemote();
    const env = readEnv({ DATABASE_URL: db.url, PORT: "0", LOG_LEVEL: "silent", TRISTATE_SWEEP_INTERVAL_MS: "0" });
    service = await startService(env, {
      tools: [
        // No probe: an ambiguous answer goes straight to the human queue.
        refundTool(remote, { kind: "unsafe", probe: undefined, probeByIdentity: undefined }),
        // With probes, for probe.rerun.
        refundTool(remote, { name: "issue_refund_probed", kind: "unsafe" }),
      ],
    });
    const store = new ApiKeyStore(service.services.store.prisma);
    keys.agent = (await store.create({ name: "agent-1", role: "agent" })).secret;
    keys.viewer = (await store.create({ name: "viewer-1", role: "viewer" })).secret;
    keys.ana = (await store.create({ name: "ana", role: "operator" })).secret;
    keys.bo = (await store.create({ name: "bo", role: "admin" })).secret;
  });
  afterAll(async () => {
    await service?.close();
    await remote?.close();
    await db?.drop();
  });

  /** `POST /trpc/<path>` with the input as the JSON body, as an agent or a curl would. */
  async function post(path: string, body: unknown, key: string | null): Promise<{ status: number; json: Json }> {
    const res = await fetch(`${service.url}/trpc/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(key ? { authorization: `Bearer ${key}` } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() };
  }
  /** `GET /trpc/<path>?input=<urlencoded JSON>`. */
  async function get(path: string, input: unknown, key: string | null): Promise<{ status: number; json: Json }> {
    const q = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
    const res = await fetch(`${service.url}/trpc/${path}${q}`, {
      headers: key ? { authorization: `Bearer ${key}` } : {},
    });
    return { status: res.status, json: await res.json() };
  }
  const client = (key: string) =>
    createTRPCClient<AppRouter>({
      links: [httpLink({ url: `${service.url}/trpc`, headers: { authorization: `Bearer ${key}` } })],
    });

  /** A record waiting for a human: the remote answers 504 without doing anything. */
  async function waitingRecord(tool = "issue_refund"): Promise<{ key: string; version: number }> {
    remote.fault({ answer: 504, commit: false });
    const { status, json } = await post(
      "calls.execute",
      {
        runId: "run-ops",
        stepId: `step-${++step}`,
        tool,
        args: { order_id: `A-${step}`, amount: "49.90", currency: "EUR" },
        budgetMs: 8000,
      },
      keys.agent,
    );
    expect(status).toBe(200);
    expect(json.result.data).toMatchObject({ status: "UNKNOWN", resolution: "needs_human" });
    const record = await service.services.store.get(json.result.data.idempotency_key);
    expect(record?.needsHuman).toBe(true);
    return { key: record!.key, version: record!.version };
  }
  const resolve = (
    rec: { key: string; version: number },
    over: Record<string, unknown> = {},
  ): Record<string, unknown> => ({
    key: rec.key,
    action: "confirm_effect",
    note: "seen in the PSP dashboard",
    expectedVersion: rec.version,
    operatorActionId: randomUUID(),
    ...over,
  });
  const humanActions = async (key: string) =>
    (await service.services.store.listEvents(key)).filter((e) => e.type === "human_action");
  const auditOf = async (key: string) =>
    service.services.store.prisma.auditEntry.findMany({ where: { key }, orderBy: { id: "asc" } });

  it("queue.list (viewer, plain GET) shows the record oldest first with version, age, and what may be done", async () => {
    const first = await waitingRecord();
    const second = await waitingRecord();
    const { status, json } = await get("queue.list", undefined, keys.viewer);
    expect(status).toBe(200);
    const items: Json[] = json.result.data.items;
    const keysInOrder = items.map((i) => i.key);
    expect(keysInOrder.indexOf(first.key)).toBeLessThan(keysInOrder.indexOf(second.key));
    const item = items.find((i) => i.key === first.key);
    expect(item).toMatchObject({
      tool: "issue_refund",
      kind: "unsafe",
      runId: "run-ops",
      status: "UNKNOWN",
      attempt: 1,
      version: first.version,
      error: { code: "NO_PROBE" },
      resendAllowed: true,
      keyExpired: false,
      effect: expect.stringMatching(/refund of 49.90 EUR/),
    });
    expect(item.ageMs).toBeGreaterThanOrEqual(0);
    expect(item.resendWarnings.join(" ")).toMatch(/unsafe/);
    const page = await get("queue.list", { limit: 1 }, keys.viewer);
    expect(page.json.result.data.items).toHaveLength(1);
    const next = await get("queue.list", { limit: 1, cursor: page.json.result.data.nextCursor }, keys.viewer);
    expect(next.json.result.data.items[0].key).not.toBe(page.json.result.data.items[0].key);
  });

  it("auth: no key → 401; a viewer and an agent → 403 on queue.resolve; nothing changes", async () => {
    const rec = await waitingRecord();
    const input = resolve(rec);
    expect((await post("queue.resolve", input, null)).status).toBe(401);
    const viewer = await post("queue.resolve", input, keys.viewer);
    expect(viewer.status).toBe(403);
    expect(viewer.json.error.data.code).toBe("FORBIDDEN");
    expect((await post("queue.resolve", input, keys.agent)).status).toBe(403);
    expect((await get("queue.list", undefined, keys.agent)).status).toBe(403);
    expect((await post("probe.rerun", { key: rec.key }, keys.viewer)).status).toBe(403);
    expect(await service.services.store.get(rec.key)).toMatchObject({ status: "UNKNOWN", version: rec.version });
    expect(await auditOf(rec.key)).toHaveLength(0);
  });

  it("two operators resolving the same record: one wins, the other gets CONFLICT with the winner's resolution", async () => {
    const rec = await waitingRecord();
    const [a, b] = await Promise.all([
      post("queue.resolve", resolve(rec, { action: "confirm_effect", note: "ana: refund visible in PSP" }), keys.ana),
      post("queue.resolve", resolve(rec, { action: "confirm_no_effect", note: "bo: nothing in PSP" }), keys.bo),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const [won, lost] = a.status === 200 ? [a, b] : [b, a];
    const winner =
      won === a ? { actor: "ana", action: "confirm_effect" } : { actor: "bo", action: "confirm_no_effect" };
    expect(lost.json.error.data.code).toBe("CONFLICT");
    expect(lost.json.error.data.field).toBe("expectedVersion");
    expect(lost.json.error.data.detail.winner).toMatchObject({
      by: "operator",
      ...winner,
      note: won.json.result.data.audit.note,
      at: won.json.result.data.audit.at,
    });
    expect(lost.json.error.message).toMatch(new RegExp(`operator ${winner.actor} chose ${winner.action}`));
    const record = await service.services.store.get(rec.key);
    expect(record).toMatchObject({ version: rec.version + 1, needsHuman: false });
    expect(record?.resolution).toBe(
      winner.action === "confirm_effect" ? "human_confirmed_effect" : "human_confirmed_no_effect",
    );
    expect(await auditOf(rec.key)).toHaveLength(1);
    expect(await humanActions(rec.key)).toHaveLength(1);
  });

  it("a repeated operatorActionId (double click, then a retry) acts once: replayed, one audit row with before → after, one event", async () => {
    const rec = await waitingRecord();
    const input = resolve(rec, { operatorActionId: randomUUID(), note: "confirmed with the customer" });
    const [a, b] = await Promise.all([post("queue.resolve", input, keys.ana), post("queue.resolve", input, keys.ana)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect([a.json.result.data.replayed, b.json.result.data.replayed].sort()).toEqual([false, true]);
    expect(a.json.result.data.record).toEqual(b.json.result.data.record);
    const again = await post("queue.resolve", input, keys.ana);
    expect(again.status).toBe(200);
    expect(again.json.result.data).toMatchObject({
      replayed: true,
      record: { status: "SUCCEEDED", resolution: "human_confirmed_effect", version: rec.version + 1 },
      envelope: { status: "SUCCEEDED", retry_safe: true },
    });
    expect(await humanActions(rec.key)).toHaveLength(1);
    expect((await humanActions(rec.key))[0]?.data).toMatchObject({
      action: "confirm_effect",
      actor: "ana",
      note: "confirmed with the customer",
      operatorActionId: input.operatorActionId,
    });
    const rows = await auditOf(rec.key);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      operatorActionId: input.operatorActionId,
      actorName: "ana",
      action: "confirm_effect",
      note: "confirmed with the customer",
      tool: "issue_refund",
      before: { status: "UNKNOWN", needsHuman: true, version: rec.version },
      after: { status: "SUCCEEDED", needsHuman: false, version: rec.version + 1 },
    });
    // The same id for another record is refused.
    const other = await waitingRecord();
    const reused = await post("queue.resolve", resolve(other, { operatorActionId: input.operatorActionId }), keys.ana);
    expect(reused.status).toBe(409);
    expect(reused.json.error.data.field).toBe("operatorActionId");
  });

  it("audit.list (viewer, @trpc/client): newest first, filters, cursor pagination", async () => {
    const rec1 = await waitingRecord();
    const rec2 = await waitingRecord();
    const from = Date.now() - 1;
    await post("queue.resolve", resolve(rec1, { note: "first" }), keys.ana);
    await post("queue.resolve", resolve(rec2, { action: "confirm_no_effect", note: "second" }), keys.bo);
    const viewer = client(keys.viewer);
    const page1 = await viewer.audit.list.query({ fromEpochMs: from, limit: 1 });
    expect(page1.entries).toHaveLength(1);
    expect(page1.entries[0]).toMatchObject({ key: rec2.key, actorName: "bo", note: "second" });
    expect(page1.nextCursor).not.toBeNull();
    const page2 = await viewer.audit.list.query({ fromEpochMs: from, limit: 1, cursor: page1.nextCursor! });
    expect(page2.entries[0]).toMatchObject({
      key: rec1.key,
      actorName: "ana",
      note: "first",
      action: "confirm_effect",
    });
    const acted = page2.entries[0];
    if (!acted || !("before" in acted)) throw new Error("expected an action on a record");
    expect(acted.before).toMatchObject({ status: "UNKNOWN", needsHuman: true });
    expect(acted.after).toMatchObject({ status: "SUCCEEDED", resolution: "human_confirmed_effect" });
    const byBo = await viewer.audit.list.query({ operator: "bo", action: "confirm_no_effect", fromEpochMs: from });
    expect(byBo.entries.map((e) => e.key)).toEqual([rec2.key]);
    const err = await viewer.audit.list.query({ cursor: "nope" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TRPCClientError);
    expect((err as TRPCClientError<AppRouter>).data).toMatchObject({ code: "BAD_REQUEST", field: "cursor" });
    // Past the latest time a date can hold: 400 naming the field (it was a 500), as on every list.
    for (const field of ["fromEpochMs", "toEpochMs"] as const) {
      const tooLate = await viewer.audit.list.query({ [field]: 8_640_000_000_000_001 }).catch((e: unknown) => e);
      expect((tooLate as TRPCClientError<AppRouter>).data).toMatchObject({ code: "BAD_REQUEST", field });
    }
  });

  it("resend_same_key on a record whose effect is absent → SUCCEEDED human_resent, exactly one effect at the remote", async () => {
    const rec = await waitingRecord();
    const before = remote.effects.length;
    const posts = remote.posts;
    const { status, json } = await post(
      "queue.resolve",
      resolve(rec, { action: "resend_same_key", note: "PSP shows no refund; resending" }),
      keys.ana,
    );
    expect(json.error?.message, JSON.stringify(json.error)).toBeUndefined();
    expect(status).toBe(200);
    expect(json.result.data).toMatchObject({
      replayed: false,
      keyExpired: false,
      record: { status: "SUCCEEDED", resolution: "human_resent", attempt: 2, needsHuman: false },
      envelope: { status: "SUCCEEDED", resolution: "human_resent" },
    });
    expect(json.result.data.warnings.join(" ")).toMatch(/unsafe/);
    expect(remote.posts).toBe(posts + 1);
    const effects = remote.effects.slice(before);
    expect(effects).toHaveLength(1);
    expect(effects[0]?.clientRef).toBe(rec.key);
    const audit = await auditOf(rec.key);
    expect(audit).toHaveLength(1);
    expect(audit[0]?.after).toMatchObject({ status: "PENDING", attempt: 2 });
    // The agent's repeat call replays it; nothing more is sent.
    const record = await service.services.store.get(rec.key);
    const repeat = await post(
      "calls.execute",
      { runId: record!.runId, stepId: record!.stepId, tool: "issue_refund", args: record!.args, budgetMs: 8000 },
      keys.agent,
    );
    expect(repeat.json.result.data).toMatchObject({ status: "SUCCEEDED", replayed: true });
    expect(remote.posts).toBe(posts + 1);
  });

  it("resolving a SUCCEEDED record → CONFLICT naming the state, nothing changed; bad input names the field", async () => {
    const rec = await waitingRecord();
    const first = await post("queue.resolve", resolve(rec), keys.ana);
    expect(first.status).toBe(200);
    const settled = await service.services.store.get(rec.key);
    const again = await post(
      "queue.resolve",
      resolve({ key: rec.key, version: settled!.version }, { action: "confirm_no_effect" }),
      keys.bo,
    );
    expect(again.status).toBe(409);
    expect(again.json.error.message).toMatch(/not waiting for a human: it is SUCCEEDED/);
    expect(again.json.error.data.detail).toMatchObject({ reason: "NOT_WAITING", status: "SUCCEEDED" });
    expect(await service.services.store.get(rec.key)).toEqual(settled);
    expect(await auditOf(rec.key)).toHaveLength(1);

    const other = await waitingRecord();
    const unknownAction = await post("queue.resolve", resolve(other, { action: "undo" }), keys.ana);
    expect(unknownAction.status).toBe(400);
    expect(unknownAction.json.error.data.field).toBe("action");
    const emptyNote = await post("queue.resolve", resolve(other, { note: "   " }), keys.ana);
    expect(emptyNote.json.error.data).toMatchObject({ httpStatus: 400, field: "note" });
    const longNote = await post("queue.resolve", resolve(other, { note: "x".repeat(2001) }), keys.ana);
    expect(longNote.json.error.data).toMatchObject({ httpStatus: 400, field: "note" });
    const badId = await post("queue.resolve", resolve(other, { operatorActionId: "a b" }), keys.ana);
    expect(badId.json.error.data).toMatchObject({ httpStatus: 400, field: "operatorActionId" });
    const missing = await post("queue.resolve", resolve({ key: "0".repeat(32), version: 1 }), keys.ana);
    expect(missing.status).toBe(404);
    const compensate = await post("queue.resolve", resolve(other, { action: "compensate" }), keys.ana);
    expect(compensate.status).toBe(409);
    expect(compensate.json.error.message).toMatch(/rule 6/);
    expect(await service.services.store.get(other.key)).toMatchObject({ status: "UNKNOWN", version: other.version });
    expect(await auditOf(other.key)).toHaveLength(0);
  });

  it("probe.rerun (operator) shows each probe's answer and changes nothing", async () => {
    const rec = await waitingRecord("issue_refund_probed");
    const record = await service.services.store.get(rec.key);
    expect(record?.error?.code).toBe("PROBES_ABSENT_NO_DEDUPE");
    const events = await service.services.store.listEvents(rec.key);
    const absent = await post("probe.rerun", { key: rec.key }, keys.ana);
    expect(absent.status).toBe(200);
    expect(absent.json.result.data.probes.map((p: Json) => [p.probe, p.answer])).toEqual([
      ["key", "absent"],
      ["identity", "absent"],
    ]);
    remote.effects.push({
      id: "fx_late",
      clientRef: rec.key,
      body: record!.args as Record<string, unknown>,
      committedAtEpochMs: Date.now(),
      visibleAtEpochMs: 0,
      state: "processing",
    });
    const found = await client(keys.bo).probe.rerun.mutate({ key: rec.key });
    expect(found.probes[0]).toMatchObject({ probe: "key", answer: "found", found: { id: "fx_late" } });
    expect(await service.services.store.get(rec.key)).toEqual(record);
    expect(await service.services.store.listEvents(rec.key)).toEqual(events);
    expect((await post("probe.rerun", { key: "0".repeat(32) }, keys.ana)).status).toBe(404);
  });
});
