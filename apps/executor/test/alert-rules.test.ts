import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

/**
 * The shipped Prometheus rules (issue 23 §2), checked by Debian's `promtool` (package `prometheus`;
 * `scripts/preflight.mjs` requires it): `promtool check rules` on tooling/prometheus/rules/ and `promtool
 * test rules` on the unit tests in tooling/prometheus/tests/, which must cover every alert firing and not
 * firing. The real-Prometheus test beside this one evaluates the same rules on a running service.
 */
const root = join(import.meta.dirname, "..", "..", "..");
const rulesFile = join(root, "tooling", "prometheus", "rules", "tristate-alerts.yml");
const testsDir = join(root, "tooling", "prometheus", "tests");
const testFiles = readdirSync(testsDir)
  .filter((f) => f.endsWith(".yml"))
  .map((f) => join(testsDir, f));

/** The alerts issue 23's contract names (acceptance checks call them by these names). */
const ALERTS = [
  "TristateUnknownShareHigh",
  "TristateHumanQueueWaiting",
  "TristateStalePending",
  "TristateCompensationFailed",
  "TristateExecutorDown",
];

/** Runs promtool; answers its exit code and its output (stdout and stderr together). */
async function promtool(args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)("promtool", args, { cwd: root, timeout: 60_000 });
    return { code: 0, output: `${stdout}${stderr}` };
  } catch (error) {
    const e = error as { code?: number | string; stdout?: string; stderr?: string; message: string };
    if (e.code === "ENOENT") throw new Error("promtool not found: apt-get install prometheus (Debian)");
    return { code: typeof e.code === "number" ? e.code : 1, output: `${e.stdout ?? ""}${e.stderr ?? e.message}` };
  }
}

/** The rules file's alerting rules: name → the rule's text (up to the next rule). */
function alertBlocks(): Map<string, string> {
  const text = readFileSync(rulesFile, "utf8");
  const blocks = new Map<string, string>();
  for (const part of text.split(/^\s+- (?=alert:|record:)/m).slice(1)) {
    const name = /^alert: (\S+)/.exec(part)?.[1];
    if (name) blocks.set(name, part);
  }
  return blocks;
}

describe("the shipped Prometheus rules", () => {
  it("promtool check rules accepts the rules file", async () => {
    const { code, output } = await promtool(["check", "rules", rulesFile]);
    expect(code, output).toBe(0);
    expect(output).toMatch(/SUCCESS: \d+ rules found/);
  });

  it("promtool test rules passes every unit test file", async () => {
    expect(testFiles.length).toBeGreaterThan(0);
    const { code, output } = await promtool(["test", "rules", ...testFiles]);
    expect(code, output).toBe(0);
    expect(output.match(/^\s*SUCCESS\s*$/gm) ?? [], output).toHaveLength(testFiles.length);
    expect(output).not.toMatch(/FAILED/);
  });

  it("names the contract's five alerts, each saying what to do and linking the dashboard", () => {
    const blocks = alertBlocks();
    expect([...blocks.keys()].sort()).toEqual([...ALERTS].sort());
    for (const [name, block] of blocks) {
      expect(block, name).toMatch(/^\s+summary: /m);
      expect(block, name).toMatch(/^\s+description: /m);
      expect(block, name).toMatch(/^\s+dashboard: "http:\/\/localhost:3000\/[a-z]+/m);
      expect(block, name).toMatch(/^\s+severity: (warning|critical)$/m);
    }
  });

  it("has unit tests for every alert, firing and not firing", () => {
    const cases = testFiles.flatMap((file) =>
      readFileSync(file, "utf8")
        .split(/^\s+- alertname: /m)
        .slice(1)
        .map((part) => ({ alert: part.split(/\s/)[0], fires: /^\s+exp_alerts:\s*$/m.test(part) })),
    );
    for (const alert of ALERTS) {
      expect(
        cases.some((c) => c.alert === alert && c.fires),
        `${alert} has no test where it fires`,
      ).toBe(true);
      expect(
        cases.some((c) => c.alert === alert && !c.fires),
        `${alert} has no test where it does not fire`,
      ).toBe(true);
    }
  });
});
