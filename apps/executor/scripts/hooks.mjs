// Module resolution hooks for the built service (registered by launch.mjs): an import that resolves to
// a workspace package's TypeScript entry (`@tristate/db` → packages/db/src/index.ts) loads that
// entry's build instead (packages/db/dist/index.js). A TypeScript catalog (`tristate.config.ts`, loaded
// through tsx) importing `@tristate/executor/catalog` so gets the very modules the service runs, not a
// second copy from the sources.

/** Source entry URL → built URL, from build-info.json's `entries`. */
let entries = new Map();

/** Receives `{ entries }` from `module.register`'s `data`. */
export function initialize(data) {
  entries = new Map(Object.entries(data.entries));
}

/** Resolves as Node (and tsx) would, then swaps a workspace entry's source for its build. */
export async function resolve(specifier, context, nextResolve) {
  const resolved = await nextResolve(specifier, context);
  const built = entries.get(resolved.url);
  return built ? { ...resolved, url: built, format: "module" } : resolved;
}
