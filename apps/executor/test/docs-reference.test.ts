/**
 * The reference pages cannot drift from the code (issue 22 §2): every procedure of the executor's
 * real router has its own section in `docs/api.md`, and every setting (environment variable) the
 * code reads — in `apps/`, `packages/`, `examples/`, `scripts/`, `tooling/` and the compose file,
 * tests and generated code aside — is named in `docs/operations.md` or another page under `docs/`.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { appRouter } from "../src/trpc/router.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const docsDir = join(root, "docs");

/** Folders never scanned: dependencies, build output, generated code and tests. */
const SKIPPED_DIRS = new Set([
  "node_modules",
  "dist",
  ".next",
  ".cache",
  ".tristate",
  "generated",
  "test",
  "tests",
  "test-results",
  "coverage",
]);
const SOURCE_FILE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;
const TEST_FILE = /\.(test|spec)\.[cm]?[jt]sx?$/;
/** Variables of the platform, not settings of Tristate. */
const PLATFORM = new Set(["PATH", "HOME", "TMPDIR", "SHELL", "USER", "PWD"]);
const NAME = "[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*";
/** A name with at least one underscore (`BENCH_SECONDS`), for the looser pattern. */
const SETTING = "[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+";

/** Every non-test source file under `dir` (recursively), skipping {@link SKIPPED_DIRS}. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) out.push(...sourceFiles(path));
    } else if (SOURCE_FILE.test(entry.name) && !TEST_FILE.test(entry.name)) {
      out.push(path);
    }
  }
  return out;
}

/**
 * The environment variables one source file reads: `process.env.X`, `process.env["X"]`, `env.X` (a
 * parsed settings object), the keys of a settings schema (`env.ts`, `settings.ts`), a name kept in a
 * `…_VARIABLE` constant, and `f("X")` in a file that reads `process.env[name]` through a helper.
 */
function settingsIn(path: string): Set<string> {
  const text = readFileSync(path, "utf8");
  const names = new Set<string>();
  const add = (re: RegExp) => {
    for (const m of text.matchAll(re)) if (m[1]) names.add(m[1]);
  };
  add(new RegExp(`process\\.env\\.(${NAME})\\b`, "g"));
  add(new RegExp(`process\\.env\\[\\s*["'\`](${NAME})["'\`]\\s*\\]`, "g"));
  add(new RegExp(`\\benv\\.(${NAME})\\b`, "g"));
  add(new RegExp(`\\benv\\[\\s*["'](${NAME})["']\\s*\\]`, "g"));
  if (/(^|\/)(env|settings)\.[cm]?[jt]s$/.test(path)) add(new RegExp(`^\\s+(${NAME}):`, "gm"));
  // A variable's name kept in a constant (`const API_KEY_VARIABLE = "TRISTATE_API_KEY"`).
  add(new RegExp(`\\b\\w*(?:VARIABLE|_ENV|_VAR)\\s*=\\s*["'](${SETTING})["']`, "g"));
  // Through a helper (`num("BENCH_AGENTS", 200)`): names with an underscore, so `f("A")` is not one.
  if (/process\.env\[\s*[a-z]/.test(text)) add(new RegExp(`\\b[a-zA-Z]\\w*\\(\\s*["'](${SETTING})["']`, "g"));
  return names;
}

/** Setting name → the files that read it. */
function settingsReadByTheCode(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const files = ["apps", "packages", "examples", "scripts", "tooling"].flatMap((d) => sourceFiles(join(root, d)));
  files.push(join(root, "tristate.config.ts"));
  for (const file of files) {
    for (const name of settingsIn(file)) {
      if (PLATFORM.has(name)) continue;
      found.set(name, [...(found.get(name) ?? []), relative(root, file)]);
    }
  }
  // The compose file's own variables: `${NAME:-default}`.
  const compose = readFileSync(join(root, "docker-compose.yml"), "utf8");
  for (const m of compose.matchAll(new RegExp(`\\$\\{(${NAME})`, "g"))) {
    if (m[1]) found.set(m[1], [...(found.get(m[1]) ?? []), "docker-compose.yml"]);
  }
  return found;
}

/** Every page under docs/, concatenated. */
function allDocs(): string {
  return readdirSync(docsDir)
    .filter((f) => f.endsWith(".md") && statSync(join(docsDir, f)).isFile())
    .map((f) => readFileSync(join(docsDir, f), "utf8"))
    .join("\n");
}

describe("the reference pages name everything the code has", () => {
  it("every procedure of the executor's router has its section in docs/api.md", () => {
    const procedures = Object.keys(appRouter._def.procedures).sort();
    // The router is real: a walk that found nothing would pass vacuously.
    expect(procedures).toContain("calls.execute");
    expect(procedures.length).toBeGreaterThan(20);
    const api = readFileSync(join(docsDir, "api.md"), "utf8");
    const missing = procedures.filter((p) => !api.includes(`### \`${p}\``));
    expect(
      missing,
      `procedures missing from docs/api.md — add a section "### \`<name>\`" (role, GET/POST, every input field with its type, range and default, and its errors) for: ${missing.join(", ")}`,
    ).toEqual([]);
  });

  it("every setting the code reads is named in docs/operations.md (or another page under docs/)", () => {
    const settings = settingsReadByTheCode();
    // The scan is real: the service's own settings are among what it found.
    expect(settings.has("TRISTATE_MAX_BUDGET_MS")).toBe(true);
    expect(settings.has("DATABASE_URL")).toBe(true);
    const docs = allDocs();
    const missing = [...settings.keys()].filter((name) => !docs.includes(`\`${name}\``)).sort();
    const where = missing.map((name) => `${name} (read in ${settings.get(name)?.join(", ")})`);
    expect(
      where,
      `settings missing from the reference — add a row (name, type, default, meaning) to docs/operations.md for: ${where.join("; ")}`,
    ).toEqual([]);
  });
});
