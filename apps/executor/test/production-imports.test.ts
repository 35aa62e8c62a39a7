/**
 * `npm start` (src/start.ts) and `pnpm service` (src/main.ts) load no test code: importing every
 * module they import, and the example catalog they load, in a Node process where resolving vitest or
 * `@tristate/testing` throws (test/fixtures/forbid-test-code.mjs). The entry files themselves start
 * the service, so their imports are read from their source and imported one by one.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const executorDir = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const guard = pathToFileURL(resolve(executorDir, "test/fixtures/forbid-test-code.mjs")).href;

/** The module specifiers an entry file imports statically (relative ones made absolute file URLs). */
function importsOf(entry: string): string[] {
  const file = resolve(executorDir, entry);
  const source = readFileSync(file, "utf8");
  return [...source.matchAll(/^import\s+(?!type\b)[^;]*?from\s+"([^"]+)";/gms)].map(([, spec]) =>
    spec!.startsWith(".") ? pathToFileURL(resolve(dirname(file), spec!)).href : spec!,
  );
}

/** Imports `modules` in a fresh `node --import tsx` process under the guard; its exit status and stderr. */
function importGuarded(modules: string[]): { status: number | null; stderr: string } {
  const script = `for (const m of ${JSON.stringify(modules)}) await import(m); process.exit(0);`;
  const child = spawnSync(
    process.execPath,
    ["--import", "tsx", "--import", guard, "--input-type=module", "-e", script],
    { cwd: executorDir, encoding: "utf8", timeout: 90_000 },
  );
  return { status: child.status, stderr: child.stderr };
}

describe("production entry points load no test code", () => {
  it("npm start's and the service's imports, and the example catalog, never resolve vitest or @tristate/testing", () => {
    const modules = [
      ...new Set([
        ...importsOf("src/start.ts"),
        ...importsOf("src/main.ts"),
        pathToFileURL(resolve(executorDir, "../../tristate.config.ts")).href,
      ]),
    ];
    expect(modules.some((m) => m.endsWith("/run-service.ts"))).toBe(true);
    const { status, stderr } = importGuarded(modules);
    expect(stderr).not.toContain("test code loaded");
    expect(status).toBe(0);
  });

  it("the guard catches test code: the deprecated @tristate/core/testing entry reaches vitest", () => {
    const { status, stderr } = importGuarded(["@tristate/core/testing"]);
    expect(stderr).toContain("test code loaded");
    expect(status).not.toBe(0);
  });
});
