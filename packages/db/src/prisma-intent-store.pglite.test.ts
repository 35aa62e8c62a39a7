import { describeIntentStoreContract } from "@tristate/testing";
import pg from "pg";
import { afterAll } from "vitest";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "./embedded-postgres.ts";
import { applyMigrations } from "./migrate/migrations.ts";
import { createPrismaIntentStore } from "./prisma-intent-store.ts";

// One in-memory PGlite for the file (it takes ~2 s to start); each test empties the tables afterwards.
let embedded: Promise<EmbeddedPostgres> | undefined;
afterAll(async () => {
  await (await embedded)?.close();
});

describeIntentStoreContract("PrismaIntentStore on embedded PGlite", async () => {
  embedded ??= startEmbeddedPostgres("memory://").then(async (e) => {
    await applyMigrations(e.url);
    return e;
  });
  const { url } = await embedded;
  const store = createPrismaIntentStore({ databaseUrl: url, singleSession: true });
  return {
    store,
    async cleanup() {
      await store.close();
      const client = new pg.Client(url);
      await client.connect();
      await client.query("TRUNCATE intent_events, intent_records");
      await client.end();
    },
  };
});
