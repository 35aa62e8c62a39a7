import {
  Agent,
  type AgentOutputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  Runner,
  setTracingDisabled,
  Usage,
} from "@openai/agents";
import { createTristateClient } from "@tristate/client";
import { type LocalStack, startLocalStack } from "@tristate/local-stack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tristateInstructions, tristateTools } from "../src/openai-agents.ts";
import { asEnvelope, expectOneRefundAndHonestResults, FIRST_ARGS, RETRY_ARGS } from "./scenario.ts";

let stack: LocalStack;
beforeAll(async () => {
  setTracingDisabled(true); // no trace export (and no network)
  stack = await startLocalStack();
});
afterAll(async () => {
  await stack?.close();
});

/** A minimal Model: answers from a script and keeps every request it received. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly script: (request: ModelRequest, turn: number) => AgentOutputItem[]) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    return {
      usage: new Usage(),
      output: this.script(request, this.requests.length),
      responseId: `r${this.requests.length}`,
    };
  }
  // biome-ignore lint/correctness/useYield: the runner here only uses getResponse
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("the scripted model does not stream");
  }
}

const callTool = (callId: string, args: unknown): AgentOutputItem => ({
  type: "function_call",
  callId,
  name: "issue_refund",
  arguments: JSON.stringify(args),
  status: "completed",
});
const say = (text: string): AgentOutputItem => ({
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text }],
});

/** The output of the function call `callId` in the input the model received. */
function toolOutputIn(request: ModelRequest, callId: string): unknown {
  const items = typeof request.input === "string" ? [] : request.input;
  for (const item of items) {
    if (item.type === "function_call_result" && item.callId === callId) {
      const output = item.output;
      return typeof output === "string" ? output : (output as { type: string; text?: string }).text;
    }
  }
  throw new Error(`no output for ${callId} in the model's input`);
}

describe("OpenAI Agents SDK adapter: the Runner's real tool loop against the executor on PostgreSQL", () => {
  it("a refund whose answer is lost: the model is told UNKNOWN/retry_safe false; its retry produces no second refund", async () => {
    const client = createTristateClient({ url: stack.url, apiKey: stack.agentKey });
    const catalog = await client.tools();
    const model = new ScriptedModel((request, turn) => {
      if (turn === 1) return [callTool("call-1", FIRST_ARGS)];
      if (turn === 2) {
        stack.recover(); // the remote's lookups work again; the model (wrongly) retries
        return [callTool("call-2", RETRY_ARGS)];
      }
      return [say(`refund status: ${asEnvelope(toolOutputIn(request, "call-2")).status}`)];
    });
    const agent = new Agent({
      name: "refunds",
      instructions: await tristateInstructions(client, "You handle refunds."),
      model,
      tools: await tristateTools(client, { runId: "run-openai-agents", stepId: "refund", budgetMs: 10_000 }),
    });
    stack.loseNextAnswer();
    const postsBefore = stack.remote.posts;
    const result = await new Runner({ tracingDisabled: true }).run(agent, "Refund order A-1182, 49.90 EUR.", {
      maxTurns: 5,
    });

    expect(model.requests).toHaveLength(3);
    const afterFirst = asEnvelope(toolOutputIn(model.requests[1]!, "call-1"));
    const afterRetry = asEnvelope(toolOutputIn(model.requests[2]!, "call-2"));
    expectOneRefundAndHonestResults(stack.remote, postsBefore, afterFirst, afterRetry);
    expect(result.finalOutput).toBe("refund status: SUCCEEDED");
    expect(model.requests[0]!.systemInstructions).toContain(await client.promptRule());
    // The SDK accepted tools.list's JSON Schema and offered it to the model as it is.
    const offered = model.requests[0]!.tools.find((t) => t.type === "function" && t.name === "issue_refund");
    expect(offered).toMatchObject({ strict: false, parameters: catalog[0]!.argsJsonSchema });
  });
});
