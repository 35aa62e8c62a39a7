import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const e2eDir = join(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Starts the stack (`src/stack.ts`) in its own process and hands its URLs and keys to the test
 * workers through `E2E_STACK`; the returned function (Playwright's teardown) stops it. With
 * `E2E_STACK` already set (a stack started by hand with `pnpm --filter @tristate/e2e stack`), uses that one.
 */
export default async function globalSetup(): Promise<() => Promise<void>> {
  if (process.env.E2E_STACK) return async () => {};
  const child = spawn(process.execPath, ["--import", "tsx", "src/stack.ts"], {
    cwd: e2eDir,
    env: { ...process.env, NODE_OPTIONS: "" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stderr?.on("data", (c: Buffer) => {
    out = (out + c.toString()).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the e2e stack did not start in 150 s:\n${out}`)), 150_000);
    let buffer = "";
    child.stdout?.on("data", (c: Buffer) => {
      buffer += c.toString();
      out = (out + c.toString()).slice(-20_000);
      const m = /^E2E_STACK (.+)$/m.exec(buffer);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the e2e stack exited (code ${code}) before it was ready:\n${out}`));
    });
  });
  process.env.E2E_STACK = line;
  return async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    const done = await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(r, 20_000, false))]);
    if (!done) child.kill("SIGKILL");
  };
}
