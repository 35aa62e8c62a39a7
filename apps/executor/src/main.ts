/**
 * The service alone: `DATABASE_URL` (or the embedded default), the catalog at `TRISTATE_CONFIG`.
 * `npm start` runs `start.ts`, which adds the example catalog and its example remotes.
 */
import { readEnv } from "./env.ts";
import { runService } from "./run-service.ts";

runService(readEnv()).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
