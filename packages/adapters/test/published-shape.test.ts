/**
 * The published packages, as a user installs them: `pnpm pack` of `@tristate/client` and
 * `@tristate/adapters` (build, `publishConfig` exports → `dist/`), `npm install` of the two tarballs
 * into an empty project, then plain Node 20 — no TypeScript loader — runs the client README's example
 * against the executor on PostgreSQL, and `tsc` type-checks a consumer against the shipped `.d.ts`
 * files (nothing of the executor is needed for the types).
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type LocalStack, startLocalStack } from "@tristate/local-stack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const here = dirname(fileURLToPath(import.meta.url));
const adaptersDir = resolve(here, "..");
const clientDir = resolve(here, "../../client");
const require = createRequire(import.meta.url);

/** pnpm as the test runner was started with (`npm_execpath`), else the pinned version through npx. */
function pnpmCommand(args: string[]): [string, string[]] {
  const execPath = process.env.npm_execpath;
  if (execPath && /pnpm/.test(execPath)) {
    // A JavaScript entry runs under node; pnpm's standalone build is an executable of its own.
    return /\.[cm]?js$/.test(execPath) ? [process.execPath, [execPath, ...args]] : [execPath, args];
  }
  return ["npx", ["--yes", "pnpm@12.4.2", ...args]];
}

async function pack(dir: string, destination: string): Promise<string> {
  const [cmd, args] = pnpmCommand(["pack", "--pack-destination", destination]);
  const { stdout } = await run(cmd, args, { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
  const tarball = stdout
    .trim()
    .split("\n")
    .map((l) => l.trim())
    .reverse()
    .find((l) => l.endsWith(".tgz"));
  if (!tarball) throw new Error(`pnpm pack printed no tarball:\n${stdout}`);
  return resolve(destination, tarball);
}

let work: string;
let stack: LocalStack;

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "tristate-published-"));
  const tarballs = join(work, "tarballs");
  await mkdir(tarballs);
  const client = await pack(clientDir, tarballs);
  const adapters = await pack(adaptersDir, tarballs);
  const project = join(work, "project");
  await mkdir(project);
  await writeFile(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  await run("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", client, adapters], {
    cwd: project,
  });
  // The SDKs are the user's own (optional peer dependencies): link the workspace's copies.
  for (const sdk of ["ai", "@openai/agents", "@langchain/core", "zod"]) {
    const target = await realpath(join(adaptersDir, "node_modules", sdk));
    await mkdir(dirname(join(project, "node_modules", sdk)), { recursive: true });
    await symlink(target, join(project, "node_modules", sdk), "dir");
  }
  stack = await startLocalStack();
}, 240_000);

afterAll(async () => {
  await stack?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe("published package shape (pack → npm install → plain Node, tsc on the .d.ts)", () => {
  it("the tarballs ship dist/ (ESM + .d.ts) and README, no TypeScript sources, and export dist", async () => {
    const project = join(work, "project");
    for (const name of ["client", "adapters"]) {
      const pkg = JSON.parse(await readFile(join(project, "node_modules/@tristate", name, "package.json"), "utf8"));
      expect(pkg.type).toBe("module");
      const targets = JSON.stringify(pkg.exports);
      expect(targets).toContain("./dist/");
      expect(targets).not.toContain("./src/");
      expect(pkg.private).toBeUndefined();
      if (name === "adapters") expect(pkg.dependencies["@tristate/client"]).toBe("0.1.0");
    }
    const { stdout } = await run("find", [
      join(project, "node_modules/@tristate"),
      "-name",
      "*.ts",
      "-not",
      "-name",
      "*.d.ts",
    ]);
    expect(stdout.trim()).toBe("");
    await expect(readFile(join(project, "node_modules/@tristate/client/README.md"), "utf8")).resolves.toMatch(
      /createTristateClient/,
    );
  });

  it("plain Node runs the README's example against the executor: one refund, the Envelope as is", async () => {
    const project = join(work, "project");
    const script = `
import { createTristateClient } from "@tristate/client";
import { tristateTools } from "@tristate/adapters/ai-sdk";
import { tristateTools as agentsTools } from "@tristate/adapters/openai-agents";
import { tristateTools as langchainTools } from "@tristate/adapters/langchain";
const tristate = createTristateClient({ url: process.env.TRISTATE_URL, apiKey: process.env.TRISTATE_KEY });
const deadlineEpochMs = Date.now() + 20_000;
const call = { runId: "run-published", stepId: "step-1", tool: "issue_refund",
  args: { order_id: "P-1", amount: 12.5, currency: "EUR", reason: "packaging test" }, deadlineEpochMs };
const first = await tristate.execute(call);
const again = await tristate.execute(call);
const aiTools = await tristateTools(tristate, { runId: "run-published-ai" });
const agents = await agentsTools(tristate, { runId: "run-published-agents" });
const lc = await langchainTools(tristate, { runId: "run-published-lc" });
console.log(JSON.stringify({ first, again, aiTools: Object.keys(aiTools), agents: agents.map((t) => t.name),
  langchain: lc.map((t) => t.name), rule: (await tristate.promptRule()).length }));
`;
    await writeFile(join(project, "example.mjs"), script);
    const postsBefore = stack.remote.posts;
    const { stdout } = await run(process.execPath, ["example.mjs"], {
      cwd: project,
      env: { PATH: process.env.PATH ?? "", TRISTATE_URL: stack.url, TRISTATE_KEY: stack.agentKey },
    });
    const out = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
    expect(out.first).toMatchObject({ status: "SUCCEEDED", retry_safe: true, replayed: false });
    expect(out.again).toMatchObject({
      status: "SUCCEEDED",
      replayed: true,
      idempotency_key: out.first.idempotency_key,
    });
    expect(stack.remote.posts - postsBefore).toBe(1);
    expect(stack.remote.effects.filter((e) => e.body.order_id === "P-1")).toHaveLength(1);
    expect(out.aiTools).toEqual(["issue_refund"]);
    expect(out.agents).toEqual(["issue_refund"]);
    expect(out.langchain).toEqual(["issue_refund"]);
    expect(out.rule).toBeGreaterThan(20);
  });

  it("tsc type-checks a consumer against the shipped declarations (strict, skipLibCheck off for the client)", async () => {
    const project = join(work, "project");
    await writeFile(
      join(project, "consumer.ts"),
      `import { createTristateClient, type Envelope, isTristateTransportError } from "@tristate/client";
const tristate = createTristateClient({ url: "http://127.0.0.1:1", apiKey: "k" });
export async function refund(): Promise<boolean> {
  try {
    const envelope: Envelope = await tristate.execute({ runId: "r", stepId: "s", tool: "t", args: {}, budgetMs: 1000 });
    const safe: boolean = envelope.retry_safe;
    return safe && envelope.status === "SUCCEEDED";
  } catch (error) {
    return isTristateTransportError(error) && error.outcome === "FAILED_NO_EFFECT";
  }
}
// @ts-expect-error: the status is one of the three outcomes, nothing else
export const wrong: Envelope["status"] = "PENDING";
`,
    );
    await writeFile(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          lib: ["ES2023", "DOM"],
          types: [],
        },
        files: ["consumer.ts"],
      }),
    );
    const tsc = require.resolve("typescript/bin/tsc");
    const result = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: project }).then(
      () => ({ code: 0, out: "" }),
      (e: { code?: number; stdout?: string }) => ({ code: e.code ?? 1, out: e.stdout ?? "" }),
    );
    expect(result.out).toBe("");
    expect(result.code).toBe(0);
  });
});
