#!/usr/bin/env node
// The service and the `tristate` command run JavaScript built from the workspace's TypeScript, so a
// start does not compile hundreds of files through tsx. esbuild bundles each runtime package into its
// own `dist/` — @tristate/core → packages/core/dist, @tristate/db → packages/db/dist, the executor →
// apps/executor/dist — one file per package.json export (and per command: start, main, cli), shared
// code in chunks beside them. Third-party imports stay external, so Node resolves them from the
// package's own node_modules (pnpm's layout); an import of another workspace package becomes a relative
// import of that package's built entry (`@tristate/core` → `../../core/dist/index.js`), so the built
// code runs on plain Node with no loader hooks.
//
// `ensureBuilt()` rebuilds when any bundled source (or this script, or a package.json) is newer than
// the build, so a developer never runs stale code. `node apps/executor/scripts/build.mjs` builds
// unconditionally. Tests keep running the sources (vitest, tsx).
import { existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "../../..");
const selfScripts = [join(here, "build.mjs"), join(here, "hooks.mjs")];

/**
 * The packages the service loads at run time: their package.json exports are built but for `skip`
 * (test and benchmark helpers, which tsx runs), plus `extra` entries (the commands).
 */
const PACKAGES = [
  { dir: "packages/core", skip: ["./testing"], extra: {} },
  { dir: "packages/db", skip: ["./bench"], extra: {} },
  { dir: "apps/executor", skip: [], extra: { start: "src/start.ts", main: "src/main.ts", cli: "src/cli.ts" } },
];

/** Where the build records what it bundled (written last: its presence means a complete build). */
export const BUILD_INFO = join(root, "apps/executor/dist/build-info.json");

/** The repository's root (where build-info's paths start). */
export const REPO_ROOT = root;

/** How each package is bundled (entries, outdir and plugins added per package). */
const ESBUILD_OPTIONS = {
  absWorkingDir: root,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  sourcemap: "linked",
  metafile: true,
  logLevel: "warning",
};

/** The output name of a package.json export: "." → index, "./demo-tools" → demo-tools. */
function outputName(exportKey) {
  return exportKey === "." ? "index" : exportKey.slice(2).replaceAll("/", "-");
}

/** `{ outputName: sourcePath }` for a package: its package.json exports ("." → index) and its commands. */
function entriesOf({ dir, skip, extra }) {
  const pkg = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));
  const entries = {};
  for (const [key, target] of Object.entries(pkg.exports ?? {})) {
    if (typeof target !== "string" || !target.endsWith(".ts") || skip.includes(key)) continue;
    entries[outputName(key)] = join(root, dir, target);
  }
  for (const [name, path] of Object.entries(extra)) entries[name] = join(root, dir, path);
  return entries;
}

/**
 * An esbuild plugin: `@tristate/<name>[/<export>]` imported from package `from` becomes an external
 * relative import of that package's built entry (outputs sit flat in each `dist/`, so one relative path
 * serves every output file). Other workspace packages (test helpers) stay bare imports.
 */
function workspaceImports(from) {
  const dirs = new Map(
    PACKAGES.map(({ dir }) => [JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")).name, dir]),
  );
  return {
    name: "tristate-workspace-imports",
    setup(b) {
      b.onResolve({ filter: /^@tristate\// }, ({ path }) => {
        const [scope, name, ...rest] = path.split("/");
        const dir = dirs.get(`${scope}/${name}`);
        if (!dir) return undefined; // a test helper (@tristate/testing), imported lazily by test code: left as is
        const target = join(root, dir, "dist", `${outputName(rest.length ? `./${rest.join("/")}` : ".")}.js`);
        return { path: relative(join(root, from, "dist"), target), external: true };
      });
    },
  };
}

/** `{ entryName: [chunk file names it imports statically] }` for the entries built into `out`. */
function chunksImportedBy(metafile, out) {
  const preload = {};
  for (const [file, output] of Object.entries(metafile.outputs)) {
    if (!output.entryPoint || !file.endsWith(".js")) continue;
    const chunks = output.imports.filter((i) => i.kind === "import-statement" && !i.external);
    preload[basename(file, ".js")] = chunks.map((i) => relative(out, join(root, i.path)));
  }
  return preload;
}

/** Renames `from` to `to`, replacing a previous `to`; a concurrent build that got there first wins. */
function swapInto(from, to) {
  const old = `${to}.old-${process.pid}`;
  try {
    renameSync(to, old);
  } catch (error) {
    if (error.code !== "ENOENT") throw error;
  }
  try {
    renameSync(from, to);
  } catch (error) {
    // Another process put its (identical) build in place between the two renames: keep that one.
    if (error.code !== "ENOTEMPTY" && error.code !== "EEXIST") throw error;
    rmSync(from, { recursive: true, force: true });
  }
  rmSync(old, { recursive: true, force: true });
}

/**
 * Builds @tristate/core, @tristate/db and the executor into their `dist/` folders and writes
 * {@link BUILD_INFO}: the bundled sources (for the staleness check), the map from each entry's source
 * to its build (paths from the repository's root, which may move or be mounted elsewhere; hooks.mjs) and the chunks each executor entry imports (launch.mjs). Each
 * package is built into a temporary folder and renamed into place, so a process starting meanwhile
 * never sees half a build.
 * @returns the build's duration in ms.
 * @throws when esbuild reports an error (a syntax error in a source, an unresolvable import).
 */
export async function build() {
  const started = performance.now();
  const { build: esbuild } = await import("esbuild");
  const builtAt = Date.now();
  const inputs = new Set([...selfScripts, ...PACKAGES.map((p) => join(root, p.dir, "package.json"))]);
  const entryMap = {};
  let preload = {};
  const staged = [];
  try {
    for (const pkg of PACKAGES) {
      const entries = entriesOf(pkg);
      const out = join(root, pkg.dir, `dist.tmp-${process.pid}`);
      staged.push([out, join(root, pkg.dir, "dist")]);
      const result = await esbuild({
        ...ESBUILD_OPTIONS,
        entryPoints: entries,
        outdir: out,
        plugins: [workspaceImports(pkg.dir)],
      });
      for (const input of Object.keys(result.metafile.inputs)) inputs.add(join(root, input));
      for (const [name, source] of Object.entries(entries)) {
        entryMap[relative(root, source)] = join(pkg.dir, "dist", `${name}.js`);
      }
      if (pkg.dir === "apps/executor") preload = chunksImportedBy(result.metafile, out);
    }
    const info = { builtAt, inputs: [...inputs].map((p) => relative(root, p)).sort(), entries: entryMap, preload };
    writeFileSync(join(staged.at(-1)[0], "build-info.json"), `${JSON.stringify(info, null, 1)}\n`);
    for (const [from, to] of staged) swapInto(from, to);
  } finally {
    for (const [from] of staged) rmSync(from, { recursive: true, force: true });
  }
  return Math.round(performance.now() - started);
}

/**
 * Why the build must be redone, or null when it is current: no build yet, or a bundled source, this
 * script or a package.json changed (modified after the build, or gone) since.
 */
export function staleReason() {
  if (!existsSync(BUILD_INFO)) return "no build yet";
  const { builtAt, inputs } = JSON.parse(readFileSync(BUILD_INFO, "utf8"));
  for (const input of inputs) {
    const path = join(root, input);
    if (!existsSync(path)) return `${input} is gone`;
    if (statSync(path).mtimeMs > builtAt) return `${input} changed`;
  }
  return null;
}

/**
 * Builds when the build is missing or older than its sources (see {@link staleReason}), saying so on
 * stderr (stdout may be an MCP client's protocol stream).
 * @returns the build-info: `{ builtAt, inputs, entries, preload }`.
 */
export async function ensureBuilt() {
  const reason = staleReason();
  if (reason) {
    process.stderr.write(`tristate: building the service (${reason}) … `);
    const ms = await build();
    process.stderr.write(`done in ${(ms / 1000).toFixed(1)} s\n`);
  }
  return JSON.parse(readFileSync(BUILD_INFO, "utf8"));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const ms = await build();
  console.log(`built @tristate/core, @tristate/db and @tristate/executor into their dist/ in ${ms} ms`);
}
