/**
 * The service's own PORT already taken (issue 22: `npm start` died with a bare `listen EADDRINUSE`):
 * the error names the setting to change and keeps the code for callers that retry elsewhere.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:net";
import { createTestDatabase, type TestDatabase } from "@tristate/db";
import { afterAll, beforeAll, expect, it } from "vitest";
import { readEnv } from "../src/env.ts";
import { startService } from "../src/service.ts";

let held: Server;
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  held = createServer();
  held.listen(0, "127.0.0.1");
  await once(held, "listening");
});
afterAll(async () => {
  await new Promise((resolve) => held.close(resolve));
  await db?.drop();
});

it("PORT in use: 'HOST:PORT is in use (another Tristate?): set PORT=…', code EADDRINUSE", async () => {
  const port = (held.address() as { port: number }).port;
  const env = readEnv({ DATABASE_URL: db.url, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "silent" });
  const error = await startService(env, { tools: [] }).catch((e: Error) => e);
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).message).toBe(
    `127.0.0.1:${port} is in use (another Tristate?): set PORT=<a free port> or stop the other process`,
  );
  expect((error as { code?: string }).code).toBe("EADDRINUSE");
});
