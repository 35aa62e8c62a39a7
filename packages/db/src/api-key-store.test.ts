import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_KEY_ROLES, ApiKeyStore, hashApiKey, KEY_PREFIX_SECRET_CHARS } from "./api-key-store.ts";
import { PrismaIntentStore } from "./prisma-intent-store.ts";
import { createTestDatabase, type TestDatabase } from "./test-database.ts";

describe("ApiKeyStore prefixes on PostgreSQL: enough of the secret to tell keys apart", () => {
  let db: TestDatabase;
  let store: PrismaIntentStore;
  let keys: ApiKeyStore;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PrismaIntentStore({ databaseUrl: db.url });
    keys = new ApiKeyStore(store.prisma);
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  it("every role's prefix is ts_<role>_ and 8 characters of the random part, the start of its secret", async () => {
    expect(KEY_PREFIX_SECRET_CHARS).toBe(8);
    for (const role of API_KEY_ROLES) {
      const { info, secret } = await keys.create({ name: `${role} one`, role });
      expect(info.prefix).toMatch(new RegExp(`^ts_${role}_[A-Za-z0-9_-]{8}$`));
      expect(secret.startsWith(info.prefix)).toBe(true);
      expect(secret.length - info.prefix.length).toBe(43 - 8); // 35 characters (208 bits) never shown
    }
  });

  it("revoke without an id is refused and revokes nothing (Prisma drops an undefined filter: it revoked every key)", async () => {
    const { secret } = await keys.create({ name: "kept", role: "agent" });
    await expect(keys.revoke(undefined as unknown as string)).rejects.toThrow(/^id: must be a non-empty string$/);
    await expect(keys.revoke("")).rejects.toThrow(/^id: /);
    expect(await keys.verify(secret)).not.toBeNull();
  });

  it("two operator keys list with different prefixes (was ts_operator_ for both)", async () => {
    const a = await keys.create({ name: "ops a", role: "operator" });
    const b = await keys.create({ name: "ops b", role: "operator" });
    expect(a.info.prefix).not.toBe(b.info.prefix);
    const listed = new Map((await keys.list()).map((k) => [k.id, k.prefix]));
    expect(listed.get(a.info.id)).toBe(a.info.prefix);
    expect(listed.get(b.info.id)).toBe(b.info.prefix);
    const operators = (await keys.list()).filter((k) => k.role === "operator").map((k) => k.prefix);
    expect(new Set(operators).size).toBe(operators.length);
  });

  it("a key stored before (prefix the first 12 characters) still verifies, lists and revokes", async () => {
    const secret = `ts_operator_${randomBytes(32).toString("base64url")}`;
    const id = randomUUID();
    await store.prisma.apiKey.create({
      data: {
        id,
        name: "legacy",
        role: "operator",
        hash: hashApiKey(secret),
        prefix: secret.slice(0, 12),
        createdAt: new Date(),
      },
    });
    expect(await keys.verify(secret)).toMatchObject({ id, role: "operator", prefix: "ts_operator_" });
    expect((await keys.list()).find((k) => k.id === id)?.prefix).toBe("ts_operator_");
    expect(await keys.revoke(id)).toStrictEqual({ revoked: true, sessionsEnded: 0 });
    expect(await keys.verify(secret)).toBeNull();
  });
});
