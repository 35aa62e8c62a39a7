import type { ExecutorOptions } from "./executor-api.ts";
import type { AnyTool } from "./tool.ts";

/**
 * The catalog by name, and every tool the executor runs: the catalog and the internal tools, which
 * run (and are reconciled, swept, resolved) like any but are not in the catalog.
 * @throws TypeError when a name repeats.
 */
export function toolMaps(options: ExecutorOptions): { tools: Map<string, AnyTool>; runnable: Map<string, AnyTool> } {
  const tools = new Map<string, AnyTool>();
  for (const tool of options.tools) {
    if (tools.has(tool.name)) throw new TypeError(`createExecutor: tools contains "${tool.name}" twice`);
    tools.set(tool.name, tool);
  }
  const runnable = new Map(tools);
  for (const tool of options.internalTools ?? []) {
    if (runnable.has(tool.name)) throw new TypeError(`createExecutor: internalTools repeats the tool "${tool.name}"`);
    runnable.set(tool.name, tool);
  }
  return { tools, runnable };
}
