/**
 * A Vercel AI SDK agent (`generateText` with tools) whose refunds go through Tristate. The model is
 * scripted (`MockLanguageModelV4` from `ai/test`): no network, no API key. Run: `pnpm example:ai-sdk`.
 */
import { tristateInstructions, tristateTools } from "@tristate/adapters/ai-sdk";
import { generateText, isStepCount } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describeEnvelope, FIRST_ARGS, REQUEST, RETRY_ARGS, startStory } from "./story.ts";

type Result = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>;
type Prompt = Parameters<MockLanguageModelV4["doGenerate"]>[0]["prompt"];

const story = await startStory("Vercel AI SDK agent, refunds through Tristate");
const usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};
const lastToolResult = (prompt: Prompt) => {
  const part = prompt.flatMap((m) => (m.role === "tool" ? m.content : [])).at(-1);
  return part?.type === "tool-result" && part.output.type === "json"
    ? (part.output.value as { status: string; retry_safe: boolean; message: string })
    : undefined;
};
const refund = (id: string, args: object): Result => ({
  content: [{ type: "tool-call", toolCallId: id, toolName: "issue_refund", input: JSON.stringify(args) }],
  finishReason: { unified: "tool-calls", raw: undefined },
  usage,
  warnings: [],
});

// The scripted model: refunds, reads the envelope, (naively) retries after UNKNOWN, then answers.
const model: MockLanguageModelV4 = new MockLanguageModelV4({
  doGenerate: async ({ prompt }): Promise<Result> => {
    const seen = lastToolResult(prompt);
    if (seen) story.log(`model reads: ${describeEnvelope(seen)}`);
    switch (model.doGenerateCalls.length) {
      case 1:
        story.log("model calls issue_refund");
        return refund("call-1", FIRST_ARGS);
      case 2:
        story.stack.recover(); // the refund service's lookups answer again
        story.log("model retries issue_refund with reworded arguments");
        return refund("call-2", RETRY_ARGS);
      default:
        return {
          content: [{ type: "text", text: `Your refund is ${seen?.status}.` }],
          finishReason: { unified: "stop", raw: undefined },
          usage,
          warnings: [],
        };
    }
  },
});

const { client } = story;
const result = await generateText({
  model,
  tools: await tristateTools(client, {
    runId: "example-ai-sdk",
    stepId: "refund",
    deadlineEpochMs: Date.now() + 30_000,
  }),
  instructions: await tristateInstructions(client, "You are a support agent who handles refunds."),
  prompt: REQUEST,
  stopWhen: isStepCount(5),
});
story.log(`model answers: ${result.text}`);
await story.end();
