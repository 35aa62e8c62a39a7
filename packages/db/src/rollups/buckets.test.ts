import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../test-database.ts";
import { HIST_RELATIVE_ERROR, histBucketOf, histBucketSql, histBucketValue } from "./buckets.ts";

let db: TestDatabase;
let client: pg.Client;
beforeAll(async () => {
  db = await createTestDatabase();
  client = new pg.Client(parseIntoClientConfig(db.url));
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

// Durations on both sides of bucket edges, sub-µs ones, and the range the executor sees (µs to hours).
const DURATIONS_MS = [
  0, 0.0004, 0.001, 0.0011, 0.5, 1, 1.09, 1.0905, 2, 3.7, 10, 99.9, 250, 1_000, 12_345.6, 3_600_000,
];

it("the SQL histogram bucket agrees with histBucketOf on PostgreSQL (the rollups and the live overview read the same bucket)", async () => {
  const { rows } = await client.query<{ d: number; k: number }>(
    `SELECT d, ${histBucketSql("d")} AS k FROM unnest($1::float8[]) AS d`,
    [DURATIONS_MS],
  );
  expect(rows).toHaveLength(DURATIONS_MS.length);
  for (const { d, k } of rows) expect({ d, k }).toEqual({ d, k: histBucketOf(d) });
});

it("a bucket's reported value lies within HIST_RELATIVE_ERROR of every duration in it", () => {
  for (const d of DURATIONS_MS.filter((x) => x >= 0.001)) {
    const reported = histBucketValue(histBucketOf(d));
    expect(Math.abs(reported - d) / d).toBeLessThanOrEqual(HIST_RELATIVE_ERROR + 1e-12);
  }
});
