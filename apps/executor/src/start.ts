/**
 * The README's main command (`npm start`): the executor service on the embedded default database,
 * with the example catalog (`tristate.config.ts`) and, unless you point the catalog at your own
 * services, the two example remotes it talks to (a payment service that honours `Idempotency-Key`
 * and a mail service that does not), run in this process on loopback. They never fail unless
 * `TRISTATE_DEMO_FAULTS` turns their random faults on (`on`, or `<kind>=<rate>,…`; an invalid value
 * stops the start with a message naming the setting).
 */
import { resolve } from "node:path";
import { REPO_ROOT } from "@tristate/db";
import { startExampleRemotes } from "./demo/example-remotes.ts";
import { DEMO_FAULTS_ON, demoFaultsFromEnv, describeDemoFaults } from "./demo/remotes/index.ts";
import { readEnv } from "./env.ts";
import { runService } from "./run-service.ts";

async function start(): Promise<void> {
  const source = { ...process.env };
  const ownCatalog = Boolean(source.TRISTATE_CONFIG);
  source.TRISTATE_CONFIG ??= resolve(REPO_ROOT, "tristate.config.ts");
  const env = readEnv(source);
  if (!ownCatalog) {
    const randomFaults = demoFaultsFromEnv(source);
    const { lines } = await startExampleRemotes(source, env, randomFaults);
    for (const line of lines) process.stdout.write(`${line}\n`);
    process.stdout.write(
      `example services' faults (TRISTATE_DEMO_FAULTS): ${describeDemoFaults(randomFaults.rates)}${
        Object.keys(randomFaults.rates).length
          ? ""
          : ` — to see UNKNOWN outcomes and their reconciliation, start with TRISTATE_DEMO_FAULTS=on (${DEMO_FAULTS_ON})`
      }\n`,
    );
  }
  await runService(env);
}

start().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
