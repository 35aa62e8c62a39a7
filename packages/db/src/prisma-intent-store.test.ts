import { describeIntentStoreContract } from "@tristate/testing";
import { createPrismaIntentStore } from "./prisma-intent-store.ts";
import { createTestDatabase } from "./test-database.ts";

describeIntentStoreContract("PrismaIntentStore on PostgreSQL, no group commit", async () => {
  const db = await createTestDatabase();
  const store = createPrismaIntentStore({ databaseUrl: db.url, groupCommit: false, groupUpdates: false });
  return {
    store,
    async cleanup() {
      await store.close();
      await db.drop();
    },
  };
});

describeIntentStoreContract("PrismaIntentStore on PostgreSQL (group commit, the default)", async () => {
  const db = await createTestDatabase();
  const store = createPrismaIntentStore({ databaseUrl: db.url });
  return {
    store,
    async cleanup() {
      await store.close();
      await db.drop();
    },
  };
});

describeIntentStoreContract(
  "PrismaIntentStore on PostgreSQL, every write through the multi-row statements",
  async () => {
    const db = await createTestDatabase();
    const always = { alwaysBatch: true };
    const store = createPrismaIntentStore({ databaseUrl: db.url, groupCommit: always, groupUpdates: always });
    return {
      store,
      async cleanup() {
        await store.close();
        await db.drop();
      },
    };
  },
);
