/**
 * An OpenAI Agents SDK agent whose refunds go through Tristate. The model is a minimal scripted
 * `Model` implementation: no network, no API key. Run: `pnpm example:openai-agents`.
 */
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
import { tristateInstructions, tristateTools } from "@tristate/adapters/openai-agents";
import { describeEnvelope, FIRST_ARGS, REQUEST, RETRY_ARGS, startStory } from "./story.ts";

setTracingDisabled(true); // nothing leaves this machine
const story = await startStory("OpenAI Agents SDK agent, refunds through Tristate");

/** The scripted model: refunds, reads the envelope, (naively) retries after UNKNOWN, then answers. */
class ScriptedModel implements Model {
  turn = 0;
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.turn++;
    const items = typeof request.input === "string" ? [] : request.input;
    const last = items.filter((i) => i.type === "function_call_result").at(-1);
    const seen = last
      ? JSON.parse(typeof last.output === "string" ? last.output : String((last.output as { text?: string }).text))
      : undefined;
    if (seen) story.log(`model reads: ${describeEnvelope(seen)}`);
    const call = (callId: string, args: object): AgentOutputItem => ({
      type: "function_call",
      callId,
      name: "issue_refund",
      arguments: JSON.stringify(args),
      status: "completed",
    });
    let output: AgentOutputItem;
    if (this.turn === 1) {
      story.log("model calls issue_refund");
      output = call("call-1", FIRST_ARGS);
    } else if (this.turn === 2) {
      story.stack.recover(); // the refund service's lookups answer again
      story.log("model retries issue_refund with reworded arguments");
      output = call("call-2", RETRY_ARGS);
    } else {
      output = {
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: `Your refund is ${seen?.status}.` }],
      };
    }
    return { usage: new Usage(), output: [output] };
  }
  // biome-ignore lint/correctness/useYield: this example only uses getResponse
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("the scripted model does not stream");
  }
}

const { client } = story;
const agent = new Agent({
  name: "support",
  instructions: await tristateInstructions(client, "You are a support agent who handles refunds."),
  model: new ScriptedModel(),
  tools: await tristateTools(client, {
    runId: "example-openai-agents",
    stepId: "refund",
    deadlineEpochMs: Date.now() + 30_000,
  }),
});
const result = await new Runner({ tracingDisabled: true }).run(agent, REQUEST, { maxTurns: 5 });
story.log(`model answers: ${result.finalOutput}`);
await story.end();
