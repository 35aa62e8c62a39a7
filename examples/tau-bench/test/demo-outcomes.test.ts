/**
 * `pnpm demo` shows a newcomer the three outcomes (issue 22 §3): with the τ-bench data this
 * repository carries and the example remotes' fault switch at its default (`TRISTATE_DEMO_FAULTS=on`),
 * the executor records SUCCEEDED and FAILED_NO_EFFECT calls, and UNKNOWNs that reconciliation settled
 * — found by a probe, or absent and resent — besides the one that waits for a person.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** `name 12 · other 3` → { name: 12, other: 3 }. */
function counts(text: string): Record<string, number> {
  return Object.fromEntries([...text.matchAll(/([A-Za-z_]+) (\d+)/g)].map(([, k, n]) => [k, Number(n)]));
}

it("the demo's calls end in all three outcomes, and its UNKNOWNs are reconciled (found, absent → resent)", async () => {
  const scripts = JSON.parse(await readFile(join(pkgDir, "package.json"), "utf8")).scripts as Record<string, string>;
  const dataDir = await mkdtemp(join(tmpdir(), "tristate-demo-outcomes-"));
  dirs.push(dataDir);
  const env: NodeJS.ProcessEnv = { ...process.env, TRISTATE_DATA_DIR: join(dataDir, "pgdata"), DATABASE_URL: "" };
  delete env.TRISTATE_DEMO_FAULTS;
  delete env.TRISTATE_DEMO_FAULTS_SEED;
  delete env.TAU_BENCH_DATA_DIR;
  const child = spawn("sh", ["-c", `${scripts.demo} --port 0 --no-dashboard --exit`], { cwd: pkgDir, env });
  let out = "";
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  expect(code, out).toBe(0);
  expect(out).toContain("(the default, `on`)");

  const statuses = /The executor's outcomes \(intents\.list\): (\d+) records: (.*)/.exec(out);
  const reconciled = /UNKNOWN at first: (\d+), reconciled as (.*)/.exec(out);
  expect(statuses, out).not.toBeNull();
  expect(reconciled, out).not.toBeNull();
  const byStatus = counts(statuses![2]!);
  const byResolution = counts(reconciled![2]!);
  // The three outcomes.
  expect(byStatus.SUCCEEDED).toBeGreaterThan(0);
  expect(byStatus.FAILED_NO_EFFECT).toBeGreaterThan(0);
  expect(Number(reconciled![1])).toBeGreaterThanOrEqual(3);
  // Reconciliation settled UNKNOWNs both ways; what it could not settle waits for a person.
  expect(byResolution.found).toBeGreaterThan(0);
  expect(byResolution.absent_resent).toBeGreaterThan(0);
  expect(byStatus.UNKNOWN ?? 0).toBe(byResolution.needs_human ?? 0);
  // The records add up, and the report's guarantees hold under these faults.
  expect(Object.values(byStatus).reduce((a, b) => a + b, 0)).toBe(Number(statuses![1]));
  expect(out).toMatch(/Tristate: matched \d+\/40 · duplicates 0 · gaps 0 · \d+ waiting for a person · status lies 0/);
  expect(out).toContain("zero duplicate effects: yes; every unmatched task in the human queue: yes");
}, 240_000);
