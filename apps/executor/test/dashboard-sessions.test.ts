/**
 * Dashboard sessions over HTTP on the real PostgreSQL: `sessions.create` (the key, used once, as the
 * bearer) → an opaque id that acts as the key (`Authorization: Session <id>`), stored only as its
 * SHA-256; ended by `sessions.end`, by the idle timeout, by the absolute expiry, and with the key.
 */
import { createHash } from "node:crypto";
import { ApiKeyStore } from "@tristate/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, startStack, type TestStack } from "./support.ts";

let stack: TestStack;
beforeAll(async () => {
  stack = await startStack({ env: { TRISTATE_SESSION_TTL_MS: "3600000", TRISTATE_SESSION_IDLE_MS: "600000" } });
});
afterAll(async () => {
  await stack?.close();
});

const prisma = () => stack.service.services.store.prisma;
const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** GET with `Authorization: Session <id>`. */
async function withSession(path: string, sessionId: string, input?: unknown): Promise<{ status: number; json: Json }> {
  const q = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  const res = await fetch(`${stack.service.url}/trpc/${path}${q}`, {
    headers: { authorization: `Session ${sessionId}` },
  });
  return { status: res.status, json: await res.json() };
}

async function open(key: string): Promise<Json> {
  const res = await stack.post("sessions.create", {}, key);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.result.data;
}

describe("sessions.create", () => {
  it("gives an opaque id, not the key, that acts as the key with its role; only its SHA-256 is stored", async () => {
    const before = Date.now();
    const session = await open(stack.keys.viewer);
    expect(session.sessionId).toMatch(/^tss_[A-Za-z0-9_-]{43}$/);
    expect(session.sessionId).not.toContain(stack.keys.viewer.slice(10));
    expect(session).toMatchObject({ role: "viewer", name: "viewer key", idleTimeoutMs: 600_000 });
    expect(session.expiresAtEpochMs).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(session.expiresAtEpochMs).toBeLessThanOrEqual(Date.now() + 3_600_000);

    const who = await withSession("auth.whoami", session.sessionId);
    expect(who.status).toBe(200);
    expect(who.json.result.data).toMatchObject({ name: "viewer key", role: "viewer" });
    expect((await withSession("queue.list", session.sessionId, {})).status).toBe(200);
    // The role holds: a viewer's session may not resolve.
    const resolve = await fetch(`${stack.service.url}/trpc/queue.resolve`, {
      method: "POST",
      headers: { authorization: `Session ${session.sessionId}`, "content-type": "application/json" },
      body: JSON.stringify({
        key: "0".repeat(32),
        action: "confirm_effect",
        note: "n",
        expectedVersion: 1,
        operatorActionId: "x",
      }),
    });
    expect(resolve.status).toBe(403);

    const rows = await prisma().dashboardSession.findMany({ where: { hash: sha256(session.sessionId) } });
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows);
    expect(stored).not.toContain(session.sessionId);
    expect(stored).not.toContain(stack.keys.viewer);
    // A key is not a session id, nor the other way round.
    expect((await withSession("auth.whoami", stack.keys.viewer)).status).toBe(401);
    expect((await stack.get("auth.whoami", undefined, session.sessionId)).status).toBe(401);
  });

  it("needs a valid viewer, operator or admin key as the bearer: agents 403, none or bad 401", async () => {
    for (const role of ["operator", "admin"] as const) expect((await open(stack.keys[role])).role).toBe(role);
    const agent = await stack.post("sessions.create", {}, stack.keys.agent);
    expect(agent.status).toBe(403);
    expect((await stack.post("sessions.create", {}, null)).status).toBe(401);
    expect((await stack.post("sessions.create", {}, "ts_viewer_not-a-real-key-000000")).status).toBe(401);
    expect((await withSession("auth.whoami", `tss_${"A".repeat(43)}`)).status).toBe(401);
    expect((await withSession("auth.whoami", "garbage")).status).toBe(401);
  });
});

describe("a session ends", () => {
  it("on sign-out (sessions.end): the same id is refused from then on", async () => {
    const { sessionId } = await open(stack.keys.operator);
    expect((await withSession("auth.whoami", sessionId)).status).toBe(200);
    const end = await stack.post("sessions.end", { sessionId }, null);
    expect(end.status).toBe(200);
    expect(end.json.result.data).toEqual({ ended: true });
    expect((await withSession("auth.whoami", sessionId)).status).toBe(401);
    expect((await stack.post("sessions.end", { sessionId }, null)).json.result.data).toEqual({ ended: false });
    expect(await prisma().dashboardSession.count({ where: { hash: sha256(sessionId) } })).toBe(0);
  });

  it("after the idle timeout, and each use moves the idle timeout on", async () => {
    const { sessionId } = await open(stack.keys.viewer);
    const where = { hash: sha256(sessionId) };
    // Used 9 minutes ago (idle timeout 10): still valid, and the use is recorded.
    await prisma().dashboardSession.updateMany({ where, data: { lastSeenAt: new Date(Date.now() - 540_000) } });
    expect((await withSession("auth.whoami", sessionId)).status).toBe(200);
    const seen = (await prisma().dashboardSession.findUniqueOrThrow({ where })).lastSeenAt.getTime();
    expect(Date.now() - seen).toBeLessThan(10_000);
    // Unused for 10 minutes: ended.
    await prisma().dashboardSession.updateMany({ where, data: { lastSeenAt: new Date(Date.now() - 600_001) } });
    expect((await withSession("auth.whoami", sessionId)).status).toBe(401);
    expect(await prisma().dashboardSession.count({ where })).toBe(0);
  });

  it("at its absolute expiry, however recently used", async () => {
    const { sessionId } = await open(stack.keys.viewer);
    const where = { hash: sha256(sessionId) };
    await prisma().dashboardSession.updateMany({ where, data: { expiresAt: new Date(Date.now() - 1) } });
    expect((await withSession("auth.whoami", sessionId)).status).toBe(401);
    expect(await prisma().dashboardSession.count({ where })).toBe(0);
  });

  it("with its key: keys.revoke ends all of the key's sessions (and a key revoked elsewhere is refused too)", async () => {
    const keyStore = new ApiKeyStore(prisma());
    const made = await keyStore.create({ name: "to revoke", role: "operator" });
    const other = await open(stack.keys.operator);
    const a = await open(made.secret);
    const b = await open(made.secret);
    const revoke = await stack.post("keys.revoke", { id: made.info.id }, stack.keys.admin);
    expect(revoke.status).toBe(200);
    expect(revoke.json.result.data).toEqual({ id: made.info.id, revoked: true, sessionsEnded: 2 });
    for (const s of [a, b]) expect((await withSession("auth.whoami", s.sessionId)).status).toBe(401);
    expect(await prisma().dashboardSession.count({ where: { keyId: made.info.id } })).toBe(0);
    expect((await withSession("auth.whoami", other.sessionId)).status).toBe(200);

    // Revoked straight in the store (as `tristate keys revoke` does): its session is refused at once.
    const cli = await keyStore.create({ name: "revoked by the CLI", role: "viewer" });
    const c = await open(cli.secret);
    await keyStore.revoke(cli.info.id);
    expect((await withSession("auth.whoami", c.sessionId)).status).toBe(401);
  });
});
