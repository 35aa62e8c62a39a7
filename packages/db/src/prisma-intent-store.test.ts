import { describeIntentStoreContract } from "@tristate/core/testing";
import { createPrismaIntentStore } from "./prisma-intent-store.ts";
import { createTestDatabase } from "./test-database.ts";

describeIntentStoreContract("PrismaIntentStore on PostgreSQL", async () => {
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

describeIntentStoreContract("PrismaIntentStore on PostgreSQL, outcome writes grouped", async () => {
  const db = await createTestDatabase();
  // Every compare-and-set goes through the multi-row statement (alone, when nothing else waits).
  const store = createPrismaIntentStore({ databaseUrl: db.url, groupUpdates: true });
  return {
    store,
    async cleanup() {
      await store.close();
      await db.drop();
    },
  };
});
