/** What the model reads about a stored record: the envelope, and the phrase that names its effect. */
import { storedArgsForHooks } from "./call-input.ts";
import { buildEnvelope, type Envelope } from "./envelope.ts";
import type { IntentRecord } from "./intent-store.ts";
import type { Runtime } from "./runtime.ts";
import type { AnyTool } from "./tool.ts";

/**
 * The phrase naming an effect: the tool's `describe` (when it answers non-blank text), else the tool
 * name and its identity fields (`issue_refund (order_id=A-1, amount=5.00)`). Never throws: a
 * `describe` that throws falls back to the name.
 */
export function effectPhrase(
  tool: AnyTool | undefined,
  toolName: string,
  args: unknown,
  identity: Record<string, string>,
): string {
  if (tool?.describe) {
    try {
      const phrase = tool.describe(args);
      if (typeof phrase === "string" && phrase.trim() !== "") return phrase;
    } catch {
      // describe is cosmetic; fall back below
    }
  }
  const parts = Object.entries(identity).map(([k, v]) => `${k}=${v}`);
  return parts.length ? `${toolName} (${parts.join(", ")})` : toolName;
}

/** Whether the service notifies an operator of the human queue (`humanQueueNotified`); false when it cannot tell. */
function operatorNotified(rt: Runtime): boolean {
  try {
    return rt.humanQueueNotified?.() === true;
  } catch {
    return false;
  }
}

/**
 * The envelope for a stored record as it stands now (the executor's clock), its effect named by
 * {@link effectPhrase} from the stored arguments.
 * @param replayed whether the answer replays an earlier outcome rather than a call made now.
 * @param actionTaken what the executor did on this call, when it says more than the status.
 */
export function envelopeFor(rt: Runtime, record: IntentRecord, replayed: boolean, actionTaken?: string): Envelope {
  const tool = rt.tools.get(record.tool);
  return buildEnvelope(record, {
    effectPhrase: effectPhrase(tool, record.tool, storedArgsForHooks(tool, record.args), record.identity),
    replayed,
    nowEpochMs: rt.clock.nowEpochMs(),
    ...(record.needsHuman ? { operatorNotified: operatorNotified(rt) } : {}),
    ...(actionTaken ? { actionTaken } : {}),
  });
}
