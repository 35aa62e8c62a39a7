/**
 * Tristate tools for LangChain JS and LangGraph (`@langchain/core` tools): one structured tool per
 * catalog entry, its `schema` the catalog's JSON Schema, answering with the Envelope — as the
 * ToolMessage's content (JSON, what the model reads) and as its `artifact` (the object, for code).
 *
 * ```ts
 * const tools = await tristateTools(client, { runId: "run-7" });
 * const model = chatModel.bindTools(tools); // or createReactAgent({ llm, tools }) / ToolNode(tools)
 * ```
 */
import { type DynamicStructuredTool, tool } from "@langchain/core/tools";
import type { ModelEnvelope, TristateClient } from "@tristate/client";
import { argsObject, describeTool, runTool, selectTools, type TristateToolsOptions } from "./shared.ts";

export { type ToolCallInfo, type TristateToolsOptions, tristateInstructions } from "./shared.ts";

/** One Tristate tool of LangChain: a structured tool whose ToolMessage carries the envelope. */
export type TristateLangChainTool = DynamicStructuredTool;

/**
 * The catalog as LangChain structured tools (usable by `bindTools`, LangGraph's `ToolNode` and
 * `createReactAgent`). Invoked with a tool call, each answers a ToolMessage whose content is the
 * Envelope as JSON and whose `artifact` is the Envelope; each call goes to `calls.execute` with the
 * run, the step (`options.stepId`, default the tool name) and the turn's deadline. LangChain checks
 * the arguments against the JSON Schema before the call (a mismatch throws
 * `ToolInputParsingException`); the executor checks them again. Add {@link tristateInstructions} to
 * the system message.
 * @throws TristateApiError / TristateTransportError when the catalog cannot be read.
 * @throws TypeError when `options.only` names a tool not in the catalog.
 */
export async function tristateTools(
  client: TristateClient,
  options: TristateToolsOptions,
): Promise<TristateLangChainTool[]> {
  return (await selectTools(client, options)).map(
    (info) =>
      tool(
        async (input: unknown, config: { toolCall?: { id?: string }; signal?: AbortSignal }) => {
          const envelope: ModelEnvelope = await runTool(
            client,
            options,
            { tool: info.name, args: argsObject(input), toolCallId: config?.toolCall?.id },
            config?.signal,
          );
          return [JSON.stringify(envelope), envelope] as [string, ModelEnvelope];
        },
        {
          name: info.name,
          description: describeTool(info),
          schema: info.argsJsonSchema,
          responseFormat: "content_and_artifact",
        },
      ) as TristateLangChainTool,
  );
}
