/**
 * Issue 21 §1: `tristate mcp --direct` (stdio, on the database itself) ends within TRISTATE_SHUTDOWN_GRACE_MS plus the margin on
 * SIGTERM while its database stalls (a TCP proxy stops forwarding, connections left open).
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ApiKeyStore } from "@tristate/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SHUTDOWN_MARGIN_MS } from "../src/shutdown.ts";
import { ticketDeclarations } from "./mcp-support.ts";
import { type StalledStack, startStalledStack } from "./stalled-stack.ts";

const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "bin", "tristate.mjs");
/** Slack for a loaded 2-core machine, ms. */
const SLACK_MS = 500;

let stack: StalledStack;
let dir: string;
beforeAll(async () => {
  stack = await startStalledStack();
  dir = await mkdtemp(join(tmpdir(), "tristate-mcp-stall-"));
});
afterAll(async () => {
  await stack?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("tristate mcp with the database stalled", () => {
  it("SIGTERM ends it within the grace period plus the margin", async () => {
    const graceMs = 1000;
    const catalog = join(dir, "catalog.json");
    await writeFile(catalog, JSON.stringify({ mcpTools: ticketDeclarations({ url: "http://127.0.0.1:9/mcp" }) }));
    const key = (await new ApiKeyStore(stack.service.services.store.prisma).create({ name: "stdio", role: "agent" }))
      .secret;
    const child = spawn(process.execPath, [bin, "mcp", "--direct"], {
      env: {
        ...process.env,
        NODE_OPTIONS: "",
        DATABASE_URL: stack.proxiedUrl,
        TRISTATE_CONFIG: catalog,
        TRISTATE_API_KEY: key,
        TRISTATE_SHUTDOWN_GRACE_MS: String(graceMs),
        LOG_LEVEL: "info",
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`tristate mcp did not start in 30 s:\n${stderr}`)), 30_000);
        child.stderr.on("data", (c: Buffer) => {
          stderr += c.toString();
          if (stderr.includes("serving on stdio")) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
      send({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
      });
      send({ jsonrpc: "2.0", method: "notifications/initialized" });
      await new Promise((r) => setTimeout(r, 300));
      stack.proxy.stall();
      // A call in flight on the stalled database (its key re-check holds a connection of the pool).
      send({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: {
          name: "open_ticket",
          arguments: { subject: "stalled" },
          _meta: { "io.tristate/deadlineEpochMs": Date.now() + 60_000 },
        },
      });
      await new Promise((r) => setTimeout(r, 300));
      const started = performance.now();
      child.kill("SIGTERM");
      const code = await exited;
      const tookMs = performance.now() - started;
      console.log(
        `tristate mcp, SIGTERM with the database stalled: exited (code ${code}) after ${Math.round(tookMs)} ms`,
      );
      expect(tookMs).toBeLessThan(graceMs + SHUTDOWN_MARGIN_MS + SLACK_MS);
      expect(code).not.toBeNull();
    } finally {
      stack.proxy.resume();
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
  }, 60_000);
});
