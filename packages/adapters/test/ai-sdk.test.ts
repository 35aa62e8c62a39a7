import { createTristateClient } from "@tristate/client";
import { type LocalStack, startLocalStack } from "@tristate/local-stack";
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tristateInstructions, tristateTools } from "../src/ai-sdk.ts";
import { asEnvelope, expectOneRefundAndHonestResults, FIRST_ARGS, RETRY_ARGS } from "./scenario.ts";

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack();
});
afterAll(async () => {
  await stack?.close();
});

/** What the scripted model receives, and what it answers (the AI SDK's language model spec, v4). */
type LanguageModelV4CallOptions = Parameters<MockLanguageModelV4["doGenerate"]>[0];
type LanguageModelV4GenerateResult = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>;

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
const callTool = (id: string, input: unknown): LanguageModelV4GenerateResult => ({
  content: [{ type: "tool-call", toolCallId: id, toolName: "issue_refund", input: JSON.stringify(input) }],
  finishReason: { unified: "tool-calls", raw: "tool_calls" },
  usage,
  warnings: [],
});
const say = (text: string): LanguageModelV4GenerateResult => ({
  content: [{ type: "text", text }],
  finishReason: { unified: "stop", raw: "stop" },
  usage,
  warnings: [],
});

/** The output of the tool result for `toolCallId` in a prompt the model received. */
function toolResultIn(options: LanguageModelV4CallOptions, toolCallId: string): unknown {
  for (const message of options.prompt) {
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type === "tool-result" && part.toolCallId === toolCallId) {
        expect(part.output.type).toBe("json");
        return (part.output as { value: unknown }).value;
      }
    }
  }
  throw new Error(`no tool result for ${toolCallId} in the prompt`);
}

describe("Vercel AI SDK adapter: generateText's real tool loop against the executor on PostgreSQL", () => {
  it("a refund whose answer is lost: the model is told UNKNOWN/retry_safe false; its retry produces no second refund", async () => {
    const client = createTristateClient({ url: stack.url, apiKey: stack.agentKey });
    const tools = await tristateTools(client, { runId: "run-ai-sdk", stepId: "refund", budgetMs: 10_000 });
    const catalog = await client.tools();
    const model: MockLanguageModelV4 = new MockLanguageModelV4({
      doGenerate: async (options): Promise<LanguageModelV4GenerateResult> => {
        switch (model.doGenerateCalls.length) {
          case 1:
            return callTool("call-1", FIRST_ARGS);
          case 2:
            stack.recover(); // the remote's lookups work again; the model (wrongly) retries
            return callTool("call-2", RETRY_ARGS);
          default:
            return say(`refund status: ${asEnvelope(toolResultIn(options, "call-2")).status}`);
        }
      },
    });
    stack.loseNextAnswer();
    const postsBefore = stack.remote.posts;
    const result = await generateText({
      model,
      tools,
      instructions: await tristateInstructions(client, "You handle refunds."),
      prompt: "Refund order A-1182, 49.90 EUR, it arrived broken.",
      stopWhen: isStepCount(5),
    });

    const calls = model.doGenerateCalls;
    expect(calls).toHaveLength(3);
    const afterFirst = asEnvelope(toolResultIn(calls[1]!, "call-1"));
    const afterRetry = asEnvelope(toolResultIn(calls[2]!, "call-2"));
    expectOneRefundAndHonestResults(stack.remote, postsBefore, afterFirst, afterRetry);
    expect(afterFirst.message).toMatch(/do not do this again/i);
    expect(result.text).toBe("refund status: SUCCEEDED");
    // The system prompt carries the rule; the tool's schema reached the model as tools.list gave it.
    const system = calls[0]!.prompt.find((m) => m.role === "system");
    expect(system?.content).toContain("You handle refunds.");
    expect(system?.content).toContain(await client.promptRule());
    const offered = calls[0]!.tools?.find((t) => t.type === "function" && t.name === "issue_refund");
    expect(offered && "inputSchema" in offered ? offered.inputSchema : undefined).toEqual(catalog[0]!.argsJsonSchema);
  });

  it("an argument the executor refuses reaches the model as a FAILED_NO_EFFECT envelope naming the field", async () => {
    const client = createTristateClient({ url: stack.url, apiKey: stack.agentKey });
    const tools = await tristateTools(client, { runId: "run-ai-sdk-bad", budgetMs: 10_000 });
    const model: MockLanguageModelV4 = new MockLanguageModelV4({
      doGenerate: async (): Promise<LanguageModelV4GenerateResult> =>
        model.doGenerateCalls.length === 1 ? callTool("bad-1", { ...FIRST_ARGS, amount: "forty" }) : say("ok"),
    });
    const posts = stack.remote.posts;
    await generateText({ model, tools, prompt: "refund", stopWhen: isStepCount(3) });
    const seen = asEnvelope(toolResultIn(model.doGenerateCalls[1]!, "bad-1")) as unknown as Record<string, unknown>;
    expect(seen).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true, error: { field: "amount" } });
    expect(stack.remote.posts).toBe(posts);
  });
});
