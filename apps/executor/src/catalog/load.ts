import type { AnyTool } from "@tristate/core";

/**
 * Loads the tool catalog. Without `TRISTATE_CONFIG` the catalog is empty (the service starts, lists
 * no tools, and says so in its log).
 * @throws Error naming the tool and the field when the catalog is invalid.
 */
export async function loadCatalog(configPath: string | undefined): Promise<AnyTool[]> {
  if (!configPath) return [];
  const mod = (await import(configPath)) as { default?: { tools?: AnyTool[] }; tools?: AnyTool[] };
  const tools = mod.default?.tools ?? mod.tools;
  if (!Array.isArray(tools)) throw new Error(`${configPath}: must export { tools: [...] } (default or named export)`);
  return tools;
}
