/**
 * Tristate tools for the OpenAI Agents SDK for JS (`@openai/agents`): one `tool()` per catalog entry,
 * its `parameters` the catalog's JSON Schema (non-strict: the executor validates the arguments), its
 * `execute` returning the Envelope, which the SDK hands to the model as the tool output (JSON).
 *
 * ```ts
 * const agent = new Agent({ name: "support", instructions: await tristateInstructions(client, "You help customers."),
 *   tools: await tristateTools(client, { runId: "run-7" }) });
 * ```
 */
import { type FunctionTool, tool } from "@openai/agents";
import type { ModelEnvelope, TristateClient } from "@tristate/client";
import { argsObject, describeTool, runTool, selectTools, type TristateToolsOptions } from "./shared.ts";

export { type ToolCallInfo, type TristateToolsOptions, tristateInstructions } from "./shared.ts";

/** The SDK's type for a non-strict JSON Schema of a tool's parameters. */
type NonStrictParameters = {
  type: "object";
  properties: Record<string, Record<string, unknown>>;
  required: string[];
  additionalProperties: true;
};

/** One Tristate tool of the Agents SDK: the model's arguments in, the envelope out. */
export type TristateAgentTool = FunctionTool<unknown, NonStrictParameters, ModelEnvelope>;

/**
 * The catalog as Agents SDK function tools. Each call goes to `calls.execute` with the run, the step
 * (`options.stepId`, default the tool name) and the turn's deadline; the model reads the Envelope
 * (for no answer from the executor: an envelope saying to repeat the same call). The schemas are
 * sent non-strict (`strict: false`): OpenAI's strict mode wants every property required, and the
 * executor validates the arguments itself (a bad argument comes back as a FAILED_NO_EFFECT envelope
 * naming the field). Add {@link tristateInstructions} to the agent's instructions.
 * @throws TristateApiError / TristateTransportError when the catalog cannot be read.
 * @throws TypeError when `options.only` names a tool not in the catalog.
 */
export async function tristateTools(
  client: TristateClient,
  options: TristateToolsOptions,
): Promise<TristateAgentTool[]> {
  return (await selectTools(client, options)).map((info) =>
    tool<NonStrictParameters, unknown, ModelEnvelope>({
      name: info.name,
      description: describeTool(info),
      parameters: info.argsJsonSchema as unknown as NonStrictParameters,
      strict: false,
      execute: (input, _context, details) =>
        runTool(
          client,
          options,
          { tool: info.name, args: argsObject(input), toolCallId: details?.toolCall?.callId },
          details?.signal,
        ),
    }),
  );
}
