#!/usr/bin/env node
// `pnpm dashboard` / `npm run dashboard`: the dashboard against a running service (EXECUTOR_URL,
// default http://127.0.0.1:4100), built first when its build is missing or older than its sources, then
// served in this process (apps/web/server.mjs), so Ctrl-C and SIGTERM stop it with exit 0.
import { buildWebIfStale, webDir } from "../apps/web/scripts/build-if-stale.mjs";

const status = buildWebIfStale({ label: "dashboard" });
if (status !== 0) process.exit(status);
// Next.js reads next.config.ts relative to the working directory.
process.chdir(webDir);
process.env.NODE_ENV = "production";
process.env.NEXT_TELEMETRY_DISABLED = "1";
await import("../apps/web/server.mjs");
