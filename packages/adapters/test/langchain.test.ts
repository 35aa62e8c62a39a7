import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { ToolInputParsingException } from "@langchain/core/tools";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";
import { createTristateClient } from "@tristate/client";
import { type LocalStack, startLocalStack } from "@tristate/local-stack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TristateLangChainTool, tristateInstructions, tristateTools } from "../src/langchain.ts";
import { asEnvelope, expectOneRefundAndHonestResults, FIRST_ARGS, RETRY_ARGS } from "./scenario.ts";

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack();
});
afterAll(async () => {
  await stack?.close();
});

/** A chat model that answers from a script, keeps every message list it received, and binds tools. */
class ScriptedChatModel extends BaseChatModel {
  readonly received: BaseMessage[][] = [];
  /** The tools as a provider would receive them (OpenAI function format). */
  bound: ReturnType<typeof convertToOpenAITool>[] = [];
  constructor(private readonly script: (messages: BaseMessage[], turn: number) => AIMessage) {
    super({});
  }
  _llmType(): string {
    return "scripted";
  }
  override bindTools(tools: TristateLangChainTool[]) {
    this.bound = tools.map((t) => convertToOpenAITool(t));
    return this.withConfig({});
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.received.push(messages);
    const message = this.script(messages, this.received.length);
    return { generations: [{ text: typeof message.content === "string" ? message.content : "", message }] };
  }
}

const callTool = (id: string, args: Record<string, unknown>) =>
  new AIMessage({ content: "", tool_calls: [{ id, name: "issue_refund", args, type: "tool_call" }] });

/** The content of the ToolMessage for `id` among the messages the model received. */
function toolContentIn(messages: BaseMessage[], id: string): unknown {
  const found = messages.find((m): m is ToolMessage => ToolMessage.isInstance(m) && m.tool_call_id === id);
  if (!found) throw new Error(`no tool message for ${id}`);
  return found.content;
}

describe("LangChain JS adapter: bindTools and tool.invoke(toolCall) against the executor on PostgreSQL", () => {
  it("a refund whose answer is lost: the model is told UNKNOWN/retry_safe false; its retry produces no second refund", async () => {
    const client = createTristateClient({ url: stack.url, apiKey: stack.agentKey });
    const catalog = await client.tools();
    const tools = await tristateTools(client, { runId: "run-langchain", stepId: "refund", budgetMs: 10_000 });
    const byName = new Map(tools.map((t) => [t.name, t]));
    const chat = new ScriptedChatModel((messages, turn) => {
      if (turn === 1) return callTool("call-1", FIRST_ARGS);
      if (turn === 2) {
        stack.recover(); // the remote's lookups work again; the model (wrongly) retries
        return callTool("call-2", RETRY_ARGS);
      }
      return new AIMessage(`refund status: ${asEnvelope(toolContentIn(messages, "call-2")).status}`);
    });
    const model = chat.bindTools(tools);
    stack.loseNextAnswer();
    const postsBefore = stack.remote.posts;
    // The tool-calling loop of LangChain's docs (what LangGraph's ToolNode does per call).
    const messages: BaseMessage[] = [
      new SystemMessage(await tristateInstructions(client, "You handle refunds.")),
      new HumanMessage("Refund order A-1182, 49.90 EUR."),
    ];
    for (let turn = 0; turn < 5; turn++) {
      const reply = await model.invoke(messages);
      messages.push(reply);
      if (!reply.tool_calls?.length) break;
      for (const call of reply.tool_calls) messages.push(await byName.get(call.name)!.invoke(call));
    }

    expect(chat.received).toHaveLength(3);
    const afterFirst = asEnvelope(toolContentIn(chat.received[1]!, "call-1"));
    const afterRetry = asEnvelope(toolContentIn(chat.received[2]!, "call-2"));
    expectOneRefundAndHonestResults(stack.remote, postsBefore, afterFirst, afterRetry);
    expect(messages.at(-1)?.content).toBe("refund status: SUCCEEDED");
    expect(chat.received[0]![0]!.content).toContain(await client.promptRule());
    const toolMessage = messages.find((m) => ToolMessage.isInstance(m) && m.tool_call_id === "call-1") as ToolMessage;
    expect(toolMessage.artifact).toEqual(afterFirst); // the envelope object, for code
    // LangChain accepted tools.list's JSON Schema and hands it to the provider as it is.
    expect(chat.bound[0]).toMatchObject({ function: { name: "issue_refund", parameters: catalog[0]!.argsJsonSchema } });
  });

  it("LangChain validates arguments against tools.list's JSON Schema before anything is sent", async () => {
    const client = createTristateClient({ url: stack.url, apiKey: stack.agentKey });
    const [refund] = await tristateTools(client, { runId: "run-langchain-schema", budgetMs: 10_000 });
    const posts = stack.remote.posts;
    await expect(refund!.invoke({ ...FIRST_ARGS, order_id: "" })).rejects.toThrow(ToolInputParsingException);
    await expect(refund!.invoke({ ...FIRST_ARGS, amount: { value: 49.9 } })).rejects.toThrow(ToolInputParsingException);
    expect(stack.remote.posts).toBe(posts);
  });
});
