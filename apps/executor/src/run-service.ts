import type { Env } from "./env.ts";
import { type RunningService, startService } from "./service.ts";
import { armLastResortExit } from "./shutdown.ts";

/**
 * Starts the service for a command line: prints the first admin key (once, on an empty embedded
 * database) and the URL, and stops gracefully on SIGTERM/SIGINT (exit 0, or 1 when stopping failed or
 * did not end within `TRISTATE_SHUTDOWN_GRACE_MS` + `SHUTDOWN_MARGIN_MS`: then it exits anyway).
 */
export async function runService(env: Env): Promise<RunningService> {
  const service = await startService(env);
  if (service.firstAdminKey) {
    process.stdout.write(
      [
        "",
        "First start on an empty database: created an admin API key. It is shown only this once:",
        "",
        `  ${service.firstAdminKey}`,
        "",
        'Create more through the API with it (POST /trpc/keys.create {"name":"my-bot","role":"agent"}),',
        "or with `npm run tristate -- keys create --role agent --name my-bot` while the service is stopped",
        "(the embedded database is opened by one process at a time; with DATABASE_URL, any time).",
        "",
        "",
      ].join("\n"),
    );
  }
  process.stdout.write(`Tristate executor at ${service.url} (API under /trpc/, /healthz, /readyz)\n`);
  let stopping = false;
  const stop = (signal: string) => {
    // A second signal (a supervisor repeating SIGTERM, a parent passing Ctrl-C on) must not cut the
    // graceful stop short: in-flight calls still get their grace period.
    if (stopping) {
      service.services.logger.info({ signal }, "already stopping; waiting for in-flight calls");
      return;
    }
    stopping = true;
    service.services.logger.info({ signal }, "stopping");
    // Whatever the database does, the process ends within the grace period and its margin (shutdown.ts).
    armLastResortExit(service.services.env.TRISTATE_SHUTDOWN_GRACE_MS, service.services.logger, service.inFlight);
    service.close().then(
      () => process.exit(0),
      (error: unknown) => {
        service.services.logger.error({ err: error }, "stop failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  return service;
}
