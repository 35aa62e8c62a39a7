import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "./open-database.ts";
import { createTestDatabase } from "./test-database.ts";

const NOW = 1_760_000_000_000;
const record = {
  key: "0123456789abcdef0123456789abcdef",
  runId: "run-1",
  stepId: "step-1",
  tool: "refund",
  args: { order_id: "A-1" },
  identity: { order_id: "A-1" },
  attempt: 1,
  leaseUntilEpochMs: NOW + 5_000,
  compensation: null,
  createdAtEpochMs: NOW,
  traceId: null,
};

describe("openDatabase", () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it("embedded: migrates a new data folder, and the intent log survives a restart", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "tristate-pgdata-"));
    dirs.push(dataDir);
    const first = await openDatabase({ embedded: true, dataDir });
    expect(first.embedded).toBe(true);
    expect(first.url).toMatch(/^postgresql:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
    const claimed = await first.store.claim(record, [], NOW);
    expect(claimed.claimed).toBe(true);
    await first.store.update(record.key, 1, { status: "SUCCEEDED", result: 0 }, [], NOW + 1, { durable: false });
    await first.close();
    await first.close(); // idempotent

    const second = await openDatabase({ embedded: true, dataDir });
    try {
      expect(await second.store.get(record.key)).toMatchObject({ status: "SUCCEEDED", result: 0, version: 2 });
    } finally {
      await second.close();
    }
  });

  it("with a URL: migrates that database and uses it", async () => {
    const db = await createTestDatabase();
    try {
      const opened = await openDatabase({ databaseUrl: db.url });
      try {
        expect(opened.embedded).toBe(false);
        expect(opened.url).toBe(db.url);
        expect((await opened.store.claim(record, [], NOW)).claimed).toBe(true);
        expect(await opened.store.prisma.intentRecord.count()).toBe(1);
      } finally {
        await opened.close();
      }
    } finally {
      await db.drop();
    }
  });
});

describe("the embedded data folder is held by one process at a time", () => {
  it("a second open is refused naming the holder; a lock left by a dead process is taken over", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tristate-lock-"));
    try {
      const dataDir = join(dir, "pgdata");
      const first = await openDatabase({ embedded: true, dataDir });
      await expect(openDatabase({ embedded: true, dataDir })).rejects.toThrow(
        new RegExp(`in use by process ${process.pid}`),
      );
      await first.close();
      // A crashed holder: its pid no longer runs.
      const { writeFile } = await import("node:fs/promises");
      await writeFile(`${dataDir}.lock`, "2147483646");
      const again = await openDatabase({ embedded: true, dataDir });
      await again.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
