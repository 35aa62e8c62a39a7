/**
 * `npm start`: the executor service on the embedded default database (or `DATABASE_URL`).
 * Stops gracefully on SIGTERM/SIGINT.
 */
import { readEnv } from "./env.ts";
import { startService } from "./service.ts";

async function main(): Promise<void> {
  const env = readEnv();
  const service = await startService(env);
  if (service.firstAdminKey) {
    process.stdout.write(
      `\nFirst start on an empty database: created an admin API key. It is shown only this once:\n\n  ${service.firstAdminKey}\n\nCreate more with: pnpm tristate keys create --role agent|viewer|operator|admin --name NAME\n\n`,
    );
  }
  process.stdout.write(`Tristate executor at ${service.url} (API under /trpc/, /healthz, /readyz)\n`);
  const stop = (signal: string) => {
    service.services.logger.info({ signal }, "stopping");
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        service.services.logger.error({ err: error }, "stop failed");
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", () => stop("SIGTERM"));
  process.once("SIGINT", () => stop("SIGINT"));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
