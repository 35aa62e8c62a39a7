/**
 * Tristate tools for the Vercel AI SDK (`ai` 7): one `tool()` per catalog entry, its `inputSchema`
 * the catalog's JSON Schema (`jsonSchema()`), its `execute` returning the Envelope the model reads.
 *
 * ```ts
 * const tools = await tristateTools(client, { runId: "run-7", deadlineEpochMs: Date.now() + 45_000 });
 * const result = await generateText({ model, tools, instructions: await tristateInstructions(client), prompt });
 * ```
 */
import type { ModelEnvelope, TristateClient } from "@tristate/client";
import { type JSONSchema7, jsonSchema, type Tool, type ToolSet, tool } from "ai";
import { argsObject, describeTool, runTool, selectTools, type TristateToolsOptions } from "./shared.ts";

export { type ToolCallInfo, type TristateToolsOptions, tristateInstructions } from "./shared.ts";

/** One Tristate tool of the AI SDK: the model's arguments in, the envelope out. */
export type TristateAiTool = Tool<Record<string, unknown>, ModelEnvelope>;

/**
 * The catalog as an AI SDK tool set, keyed by tool name. Each `execute` calls `calls.execute` with
 * the run, the step (`options.stepId`, default the tool name) and the turn's deadline, and returns
 * the Envelope as is (for no answer from the executor: an envelope saying to repeat the same call).
 * Add {@link tristateInstructions} to the system prompt.
 * @throws TristateApiError / TristateTransportError when the catalog cannot be read.
 * @throws TypeError when `options.only` names a tool not in the catalog.
 */
export async function tristateTools(
  client: TristateClient,
  options: TristateToolsOptions,
): Promise<Record<string, TristateAiTool>> {
  const tools: Record<string, TristateAiTool> = {};
  for (const info of await selectTools(client, options)) {
    tools[info.name] = tool<Record<string, unknown>, ModelEnvelope, Record<string, never>>({
      description: describeTool(info),
      inputSchema: jsonSchema<Record<string, unknown>>(info.argsJsonSchema as JSONSchema7),
      execute: (input, { toolCallId, abortSignal }) =>
        runTool(client, options, { tool: info.name, args: argsObject(input), toolCallId }, abortSignal),
    });
  }
  return tools satisfies ToolSet;
}
