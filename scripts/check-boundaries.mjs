#!/usr/bin/env node
// `node scripts/check-boundaries.mjs` (part of `npm test`, after `pnpm lint`): shows that biome.json's
// boundary rules catch what they are for. It plants a small violation of each rule in the tree (in
// folders of their own, removed afterwards), lints just those files and expects the named rule at
// the named line — and nothing on the planted files that are allowed. Then it lints the whole tree
// for those rules alone and expects no diagnostic.
//   suspicious/noImportCycles     no import cycle, type-only imports included (`ignoreTypes: false`)
//   style/noRestrictedImports     the dashboard (apps/web) imports nothing of @tristate/db or
//                                 @tristate/core, and of the executor only the router's type; no file
//                                 imports another package's src/ (relative or `@tristate/<name>/src/…`)
//   style/useImportType           in apps/web: `import { type AppRouter }` (which keeps a runtime
//                                 import under verbatimModuleSyntax) must be `import type { AppRouter }`
//   style/noCommonJs              in apps/web: no require() (nor createRequire: node:module is
//                                 restricted there), which noRestrictedImports would not see; and no
//                                 relative import that leaves apps/web (another package's tests, the
//                                 root catalog)
//   complexity/noExcessiveLinesPerFunction  no function over 100 lines in packages/core/src
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const biome = join(root, "node_modules", ".bin", "biome");
const RULES = [
  "suspicious/noImportCycles",
  "style/noRestrictedImports",
  "style/useImportType",
  "style/noCommonJs",
  "complexity/noExcessiveLinesPerFunction",
];
const probe = `__boundary-probe-${process.pid}__`;

/**
 * Each planted file: where it goes (inside a package, so path-scoped overrides apply), its text, and
 * the diagnostics expected on it as `rule@line` (none: the file is allowed).
 */
const planted = [
  {
    path: `packages/core/src/${probe}/cycle-a.ts`,
    text: 'import type { B } from "./cycle-b.ts";\nexport type A = { b?: B };\n',
    expect: ["suspicious/noImportCycles@1"],
  },
  {
    path: `packages/core/src/${probe}/cycle-b.ts`,
    text: 'import type { A } from "./cycle-a.ts";\nexport type B = { a?: A };\n',
    expect: ["suspicious/noImportCycles@1"],
  },
  {
    path: `apps/web/src/${probe}/imports-db-and-core.ts`,
    text: [
      'import { createTestDatabase } from "@tristate/db";',
      'import type { Envelope } from "@tristate/core";',
      'import { refundTool } from "@tristate/core/testing";',
      "export type E = Envelope;",
      "export const planted = [createTestDatabase, refundTool];",
      "",
    ].join("\n"),
    expect: ["style/noRestrictedImports@1", "style/noRestrictedImports@2", "style/noRestrictedImports@3"],
  },
  {
    path: `apps/web/src/${probe}/imports-executor-values.ts`,
    text: [
      'import { appRouter } from "@tristate/executor/router";',
      'import { startService } from "@tristate/executor/service";',
      'import { type AppRouter } from "@tristate/executor/router";',
      "export type R = AppRouter;",
      "export const planted = [appRouter, startService];",
      "",
    ].join("\n"),
    expect: ["style/noRestrictedImports@1", "style/noRestrictedImports@2", "style/useImportType@3"],
  },
  {
    path: `apps/web/src/${probe}/imports-router-type.ts`,
    text: 'import type { AppRouter } from "@tristate/executor/router";\nexport type R = AppRouter;\n',
    expect: [],
  },
  {
    path: `examples/chaos/src/${probe}/deep-imports.ts`,
    text: [
      'import { tauBenchDataDir } from "../../../tau-bench/src/settings.ts";',
      'import { readEnv } from "../../../../apps/executor/src/env.ts";',
      'import { canon } from "@tristate/core/src/canon.ts";',
      "export const planted = [tauBenchDataDir, readEnv, canon];",
      "",
    ].join("\n"),
    expect: ["style/noRestrictedImports@1", "style/noRestrictedImports@2", "style/noRestrictedImports@3"],
  },
  {
    path: `apps/web/src/${probe}/loads-around-imports.ts`,
    text: [
      'import { createRequire } from "node:module";',
      'import { startService } from "../../../executor/src/service.ts";',
      'import { serviceFixture } from "../../../executor/test/support.ts";',
      'import config from "../../../../tristate.config.ts";',
      'export const viaRequire = require("@tristate/executor/service");',
      "export const planted = [createRequire, startService, serviceFixture, config];",
      "",
    ].join("\n"),
    expect: [
      "style/noRestrictedImports@1",
      "style/noRestrictedImports@2",
      "style/noRestrictedImports@3",
      "style/noRestrictedImports@4",
      "style/noCommonJs@5",
    ],
  },
  {
    path: `packages/db/src/${probe}/deep-import.ts`,
    text: 'import { defineTool } from "../../../core/src/tool.ts";\nexport const planted = defineTool;\n',
    expect: ["style/noRestrictedImports@1"],
  },
  {
    path: `e2e/tests/${probe}/deep-import.ts`,
    text: 'import { startService } from "../../../apps/executor/src/service.ts";\nexport const planted = startService;\n',
    expect: ["style/noRestrictedImports@1"],
  },
  {
    path: `packages/core/src/${probe}/long-function.ts`,
    text: `export function tooLong(): number {\n  let n = 0;\n${"  n += 1;\n".repeat(100)}  return n;\n}\n`,
    expect: ["complexity/noExcessiveLinesPerFunction@1"],
  },
  {
    path: `packages/core/test/${probe}/own-src.ts`,
    text: 'import { canon } from "../../src/canon.ts";\nexport const allowed = canon;\n',
    expect: [],
  },
];

/**
 * Runs biome's linter on `paths` for the boundary rules; answers its errors (a warning would not fail
 * `pnpm lint`) as `path rule@line`.
 */
function lint(paths) {
  const args = ["lint", "--reporter=json", "--max-diagnostics=none", ...RULES.map((r) => `--only=${r}`), ...paths];
  const res = spawnSync(biome, args, { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (res.error) throw res.error;
  let report;
  try {
    report = JSON.parse(res.stdout);
  } catch {
    throw new Error(`biome lint gave no JSON report (exit ${res.status}):\n${res.stdout}\n${res.stderr}`);
  }
  return report.diagnostics
    .filter((d) => d.severity === "error" && d.category?.startsWith("lint/"))
    .map((d) => `${d.location?.path} ${d.category.slice("lint/".length)}@${d.location?.start?.line}`);
}

const dirs = [...new Set(planted.map((p) => join(root, dirname(p.path))))];
const cleanUp = () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
};
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    cleanUp();
    process.exit(130);
  });
}

const problems = [];
try {
  for (const p of planted) {
    mkdirSync(join(root, dirname(p.path)), { recursive: true });
    writeFileSync(join(root, p.path), p.text);
  }
  const found = lint(dirs);
  for (const p of planted) {
    const got = found.filter((f) => f.startsWith(`${p.path} `)).map((f) => f.slice(p.path.length + 1));
    const missing = p.expect.filter((e) => !got.includes(e));
    const extra = got.filter((g) => !p.expect.includes(g));
    if (missing.length) problems.push(`${p.path}: expected ${missing.join(", ")} — not reported`);
    if (extra.length) problems.push(`${p.path}: unexpected ${extra.join(", ")}`);
  }
} finally {
  cleanUp();
}

const inTree = lint(["."]);
for (const f of inTree) problems.push(`the tree itself: ${f}`);

if (problems.length) {
  console.error(`check-boundaries: ${problems.length} problem(s)\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
const caught = planted.reduce((n, p) => n + p.expect.length, 0);
console.log(`check-boundaries: ${caught} planted violations caught (${RULES.join(", ")}); the tree has none`);
