import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));

it("the README's main command runs the worked example on the embedded default database", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "tristate-demo-"));
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, TRISTATE_DATA_DIR: dataDir };
    delete env.DATABASE_URL;
    const res = spawnSync(process.execPath, ["--import", "tsx", join(here, "main.ts")], {
      cwd: join(here, "../.."),
      env,
      encoding: "utf8",
      timeout: 100_000,
    });
    expect(res.stderr).not.toMatch(/Error/);
    expect(res.status).toBe(0);
    expect(res.stdout).toContain("embedded PostgreSQL (PGlite)");
    expect(res.stdout).toMatch(/payments: 1 POST, 1 refund\(s\)/);
    expect(res.stdout).toMatch(/step 3 again[\s\S]*?SUCCEEDED {2}retry_safe=true {2}replayed=true/);
    expect(res.stdout).toMatch(/send_sms[\s\S]*?UNKNOWN {2}retry_safe=false[\s\S]*?needs_human/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
