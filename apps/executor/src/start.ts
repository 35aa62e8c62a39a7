/**
 * The README's main command (`npm start`): the executor service on the embedded default database,
 * with the example catalog (`tristate.config.ts`) and, unless you point the catalog at your own
 * services, the two example remotes it talks to (a payment service that honours `Idempotency-Key`
 * and a mail service that does not), run in this process on loopback.
 */
import { resolve } from "node:path";
import { REPO_ROOT } from "@tristate/db";
import { startFakeRemote } from "./demo/remotes/index.ts";
import { readEnv } from "./env.ts";
import { runService } from "./run-service.ts";

async function start(): Promise<void> {
  const source = { ...process.env };
  const ownCatalog = Boolean(source.TRISTATE_CONFIG);
  source.TRISTATE_CONFIG ??= resolve(REPO_ROOT, "tristate.config.ts");
  const env = readEnv(source);
  if (!ownCatalog) {
    for (const [name, url] of [
      ["payments", env.TRISTATE_PAYMENTS_URL],
      ["mail", env.TRISTATE_MAIL_URL],
    ] as const) {
      const { hostname, port } = new URL(url);
      if (hostname !== "127.0.0.1" && hostname !== "localhost") continue; // a real service: not ours to start
      await startFakeRemote({ port: Number(port), honorsKey: name === "payments" });
      process.stdout.write(`example ${name} service at ${url}\n`);
    }
  }
  await runService(env);
}

start().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
