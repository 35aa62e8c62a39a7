import { readFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type AnyTool, isToolDefinitionError } from "@tristate/core";
import type { Env } from "../env.ts";
import { INTERNAL_TOOL_PREFIX, isInternalToolName } from "../notifications/internal-names.ts";
import { CatalogError } from "./catalog-error.ts";
import type { Catalog, CatalogDefinition } from "./define-catalog.ts";
import { hostPolicy } from "./http-tool/host-policy.ts";
import { httpTool } from "./http-tool.ts";
import { createUpstreamPool, mcpTool } from "./mcp-tool.ts";

export { CatalogError } from "./catalog-error.ts";

/**
 * Loads the tool catalog from `configPath` (relative to the working directory): a module
 * (`tristate.config.ts`; the service runs under tsx) whose default export — or named exports — is
 * `{ tools?, httpTools?, httpToolFiles?, httpAllowHosts?, mcpTools? }` or a function of the validated configuration
 * returning it; or a `.json` file of declarative HTTP tools (`[...]` or `{ "httpTools": [...],
 * "httpAllowHosts"?: [...], "mcpTools"?: [...] }`). Without a path
 * the catalog is empty (the service starts, lists no tools, and says so in its log).
 * @param env the service's configuration, passed to a catalog function.
 * @throws CatalogError naming the tool and the field when the catalog is invalid (bad declaration,
 *   duplicate name, compensation naming a missing tool, URL template naming a field that is not an
 *   argument), or the module when it cannot be loaded.
 */
export async function loadCatalog(configPath: string | undefined, env?: Env): Promise<AnyTool[]> {
  if (!configPath) return [];
  const path = resolve(process.cwd(), configPath);
  const catalog = path.endsWith(".json")
    ? jsonCatalog(await readJson(path), path, true)
    : await moduleCatalog(path, env);
  return buildCatalog(catalog, dirname(path));
}

/**
 * Validates a catalog and turns its declarative tools into tools; with `httpAllowHosts`, every
 * declarative tool's hosts are checked against it now and before each request (see host-policy.ts).
 * @param baseDir folder that `httpToolFiles` are relative to.
 * @throws CatalogError as {@link loadCatalog}.
 */
export async function buildCatalog(
  catalog:
    | Catalog
    | { tools?: unknown; httpTools?: unknown; httpToolFiles?: unknown; httpAllowHosts?: unknown; mcpTools?: unknown },
  baseDir: string = process.cwd(),
): Promise<AnyTool[]> {
  const hosts = hostPolicy(catalog.httpAllowHosts);
  const entries: { tool: AnyTool; where: string }[] = [];
  const tools: unknown = catalog.tools ?? [];
  if (!Array.isArray(tools)) throw new CatalogError(null, "tools", "must be an array of defineTool tools");
  for (const [i, t] of tools.entries()) {
    if (!isTool(t)) throw new CatalogError(null, `tools.${i}`, "must be a tool made with defineTool");
    entries.push({ tool: t, where: `tools.${i}` });
  }
  const declared: { raw: unknown; where: string; index: number }[] = [];
  const http: unknown = catalog.httpTools ?? [];
  if (!Array.isArray(http)) throw new CatalogError(null, "httpTools", "must be an array of HTTP tool declarations");
  http.forEach((raw, i) => {
    declared.push({ raw, where: `httpTools.${i}`, index: i });
  });
  const files: unknown = catalog.httpToolFiles ?? [];
  if (!Array.isArray(files) || files.some((f) => typeof f !== "string")) {
    throw new CatalogError(null, "httpToolFiles", "must be an array of .json file paths");
  }
  for (const file of files as string[]) {
    const path = resolve(baseDir, file);
    const list = jsonCatalog(await readJson(path), path, false).httpTools ?? [];
    list.forEach((raw, i) => {
      declared.push({ raw, where: `${file}: httpTools.${i}`, index: i });
    });
  }
  for (const d of declared) entries.push({ tool: httpTool(d.raw, d.index, { hosts }), where: d.where });
  const mcp: unknown = catalog.mcpTools ?? [];
  if (!Array.isArray(mcp)) throw new CatalogError(null, "mcpTools", "must be an array of MCP tool declarations");
  // One pool per catalog: tools of one upstream server share its connection (closeMcpUpstreams ends them).
  const pool = createUpstreamPool();
  for (const [i, raw] of mcp.entries()) entries.push({ tool: mcpTool(raw, i, pool), where: `mcpTools.${i}` });

  const byName = new Map<string, string>();
  for (const { tool, where } of entries) {
    if (isInternalToolName(tool.name)) {
      throw new CatalogError(
        tool.name,
        "name",
        `(${where}) must not start with "${INTERNAL_TOOL_PREFIX}": the prefix is reserved for Tristate's internal tools`,
      );
    }
    const first = byName.get(tool.name);
    if (first !== undefined) throw new CatalogError(tool.name, "name", `declared twice (${first} and ${where})`);
    byName.set(tool.name, where);
  }
  for (const { tool } of entries) {
    const target = tool.compensation?.tool;
    if (target !== undefined && !byName.has(target)) {
      throw new CatalogError(tool.name, "compensation.tool", `"${target}" is not in the catalog`);
    }
  }
  return entries.map((e) => e.tool);
}

function isTool(t: unknown): t is AnyTool {
  if (t === null || typeof t !== "object") return false;
  const tool = t as Partial<AnyTool>;
  return (
    typeof tool.name === "string" &&
    typeof tool.invoke === "function" &&
    typeof tool.keyRetentionMs === "number" &&
    typeof tool.identity === "object"
  );
}

async function readJson(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new CatalogError(null, null, `cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CatalogError(null, null, `${path} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * A JSON catalog file's contents.
 * @param topLevel the file is the catalog itself (`TRISTATE_CONFIG`), which may set `httpAllowHosts`;
 *   a file listed in `httpToolFiles` may not.
 */
function jsonCatalog(
  value: unknown,
  path: string,
  topLevel: boolean,
): { httpTools?: unknown[]; httpAllowHosts?: unknown; mcpTools?: unknown } {
  if (Array.isArray(value)) return { httpTools: value };
  if (value !== null && typeof value === "object") {
    const known = topLevel ? ["httpTools", "httpAllowHosts", "mcpTools", "$schema"] : ["httpTools", "$schema"];
    const extra = Object.keys(value).find((k) => !known.includes(k));
    if (extra !== undefined) {
      const expected = topLevel
        ? '"httpTools" and "httpAllowHosts"'
        : '"httpTools"; httpAllowHosts belongs to the catalog';
      throw new CatalogError(null, extra, `unknown field in ${path} (expected ${expected})`);
    }
    const {
      httpTools: list,
      httpAllowHosts,
      mcpTools,
    } = value as {
      httpTools?: unknown;
      httpAllowHosts?: unknown;
      mcpTools?: unknown;
    };
    if (list !== undefined && !Array.isArray(list)) {
      throw new CatalogError(null, "httpTools", `must be an array in ${path}`);
    }
    return {
      ...(list === undefined ? {} : { httpTools: list }),
      ...(httpAllowHosts === undefined ? {} : { httpAllowHosts }),
      ...(mcpTools === undefined ? {} : { mcpTools }),
    };
  }
  throw new CatalogError(null, null, `${path} must hold an array of HTTP tools or { "httpTools": [...] }`);
}

async function moduleCatalog(path: string, env: Env | undefined): Promise<Catalog> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (error) {
    // defineTool validates at import time: name the tool and the field the same way.
    if (isToolDefinitionError(error)) throw new CatalogError(error.tool, error.field, error.rule, { cause: error });
    if (error instanceof CatalogError) throw error;
    throw new CatalogError(null, null, `cannot load ${path}: ${(error as Error)?.message ?? String(error)}`, {
      cause: error,
    });
  }
  let def = (mod.default ?? mod) as CatalogDefinition | undefined;
  if (typeof def === "function") {
    if (!env)
      throw new CatalogError(null, null, `${path}: its default export is a function, which needs the service's env`);
    def = await def(env);
  }
  if (
    def === null ||
    typeof def !== "object" ||
    !("tools" in def || "httpTools" in def || "httpToolFiles" in def || "httpAllowHosts" in def || "mcpTools" in def)
  ) {
    throw new CatalogError(
      null,
      null,
      `${path}: must export { tools?, httpTools?, httpToolFiles?, httpAllowHosts?, mcpTools? } (default or named exports)`,
    );
  }
  return def;
}
