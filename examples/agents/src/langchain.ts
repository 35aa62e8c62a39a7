/**
 * A LangChain JS agent loop (`bindTools`, then `tool.invoke(toolCall)` as LangGraph's ToolNode does)
 * whose refunds go through Tristate. The chat model is scripted: no network, no API key.
 * Run: `pnpm example:langchain`.
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tristateInstructions, tristateTools } from "@tristate/adapters/langchain";
import { describeEnvelope, FIRST_ARGS, REQUEST, RETRY_ARGS, startStory } from "./story.ts";

const story = await startStory("LangChain JS agent, refunds through Tristate");

/** The scripted chat model: refunds, reads the envelope, (naively) retries after UNKNOWN, then answers. */
class ScriptedChatModel extends BaseChatModel {
  turn = 0;
  _llmType(): string {
    return "scripted";
  }
  override bindTools() {
    return this.withConfig({});
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.turn++;
    const last = messages.filter((m) => ToolMessage.isInstance(m)).at(-1);
    const seen = last ? JSON.parse(String(last.content)) : undefined;
    if (seen) story.log(`model reads: ${describeEnvelope(seen)}`);
    const call = (id: string, args: Record<string, unknown>) =>
      new AIMessage({ content: "", tool_calls: [{ id, name: "issue_refund", args, type: "tool_call" }] });
    let message: AIMessage;
    if (this.turn === 1) {
      story.log("model calls issue_refund");
      message = call("call-1", FIRST_ARGS);
    } else if (this.turn === 2) {
      story.stack.recover(); // the refund service's lookups answer again
      story.log("model retries issue_refund with reworded arguments");
      message = call("call-2", RETRY_ARGS);
    } else {
      message = new AIMessage(`Your refund is ${seen?.status}.`);
    }
    return { generations: [{ text: "", message }] };
  }
}

const { client } = story;
const tools = await tristateTools(client, {
  runId: "example-langchain",
  stepId: "refund",
  deadlineEpochMs: Date.now() + 30_000,
});
const model = new ScriptedChatModel({}).bindTools();
const messages: BaseMessage[] = [
  new SystemMessage(await tristateInstructions(client, "You are a support agent who handles refunds.")),
  new HumanMessage(REQUEST),
];
for (let turn = 0; turn < 5; turn++) {
  const reply = await model.invoke(messages);
  messages.push(reply);
  if (!reply.tool_calls?.length) break;
  for (const call of reply.tool_calls) messages.push(await tools.find((t) => t.name === call.name)!.invoke(call));
}
story.log(`model answers: ${messages.at(-1)?.content}`);
await story.end();
