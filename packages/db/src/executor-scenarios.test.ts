import { describeExecutorScenarios } from "@tristate/testing";
import { createPrismaIntentStore } from "./prisma-intent-store.ts";
import { createTestDatabase } from "./test-database.ts";

describeExecutorScenarios("executor on PrismaIntentStore (real PostgreSQL)", async () => {
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

describeExecutorScenarios("executor on PrismaIntentStore, no group commit (real PostgreSQL)", async () => {
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
