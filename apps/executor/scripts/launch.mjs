#!/usr/bin/env node
// Runs one of the executor's commands from its build (build.mjs; rebuilt first when stale):
// `node apps/executor/scripts/launch.mjs start` (what `npm start` runs), `… main` (the service alone).
// The `tristate` command (bin/tristate.mjs) loads `cli` the same way.
import { register } from "node:module";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { register as registerTsx } from "tsx/esm/api";
import { ensureBuilt, REPO_ROOT } from "./build.mjs";

/**
 * Imports the built entry `name` (start, main, cli, or a package.json export's name) of the executor,
 * after building it when stale. The chunks it imports load first, on plain Node; then tsx is
 * registered for TypeScript catalogs (`TRISTATE_CONFIG`) — later imports only pay its hooks — and
 * hooks.mjs makes their `@tristate/*` imports load the same built modules.
 * @returns the entry's module namespace.
 */
export async function importBuilt(name) {
  const { entries, preload } = await ensureBuilt();
  for (const chunk of preload[name] ?? []) await import(new URL(`../dist/${chunk}`, import.meta.url).href);
  registerTsx();
  const urls = Object.entries(entries).map(([source, built]) => [
    pathToFileURL(join(REPO_ROOT, source)).href,
    pathToFileURL(join(REPO_ROOT, built)).href,
  ]);
  register("./hooks.mjs", import.meta.url, { data: { entries: Object.fromEntries(urls) } });
  return import(new URL(`../dist/${name}.js`, import.meta.url).href);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const name = process.argv[2];
  if (name !== "start" && name !== "main") {
    console.error("usage: node apps/executor/scripts/launch.mjs start|main");
    process.exit(2);
  }
  // A signal before the service has its own handlers (while the database starts) ends the process at
  // once, with exit code 0 — a stop that was asked for, not a failure for npm or pnpm to report;
  // once the service has them (run-service.ts), they stop it gracefully and this one stands aside.
  const stopWhileStarting = (signal) => {
    if (process.listenerCount(signal) > 1) return;
    process.stderr.write(`${signal} while starting: stopped\n`);
    process.exit(0);
  };
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, stopWhileStarting);
  await importBuilt(name);
}
