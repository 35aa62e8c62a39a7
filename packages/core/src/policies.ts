import { confirmationRefusal } from "./confirmation-policy.ts";
import { type Envelope, refusalEnvelope } from "./envelope.ts";
import type { IntentRecord } from "./intent-store.ts";
import type { Runtime } from "./runtime.ts";
import type { AnyTool } from "./tool.ts";
import { toolKindPolicy } from "./tool-kind-policy.ts";

/** The call as the policies see it. */
export interface PolicyInput {
  runId: string;
  stepId: string;
  args: unknown;
  key: string;
  effectPhrase: string;
  confirmationToken: string | undefined;
}

/**
 * Pre-flight policies, checked before anything is written or sent (issue 4):
 * - a tool's confirmation policy: above its threshold, a token confirming this call and every
 *   argument value shown is required (confirmation-policy.ts);
 * - irreversible calls last: an irreversible step is refused while a later step of the run's
 *   declared plan is fallible (has a side effect) and not yet done.
 * A call whose record already exists is not refused (its repeat replays or reconciles), except when
 * that record is FAILED_NO_EFFECT: the new attempt is a new send of this call's arguments, checked by
 * both policies like a first call.
 * @returns a FAILED_NO_EFFECT envelope when refused, else null.
 */
export async function checkPolicies(rt: Runtime, tool: AnyTool, input: PolicyInput): Promise<Envelope | null> {
  const confirmation = await confirmationRefusal(rt, tool, input);
  const refusal = confirmation ?? (await planRefusal(rt, tool, input));
  if (!refusal) return null;
  const prior = await rt.store.get(input.key);
  if (!prior) return refusal;
  // A new attempt after FAILED_NO_EFFECT is a new send of this call's arguments (rule 3): it needs its
  // own confirmation, and an irreversible one still waits for the plan's later fallible steps.
  return prior.status === "FAILED_NO_EFFECT" ? refusal : null;
}

async function planRefusal(rt: Runtime, tool: AnyTool, input: PolicyInput): Promise<Envelope | null> {
  if (!tool.irreversible) return null;
  const plan = await rt.store.getPlan(input.runId);
  if (!plan) return null;
  const index = plan.findIndex((s) => s.stepId === input.stepId);
  if (index < 0) return null;
  const later = plan.slice(index + 1).filter((s) => {
    const t = rt.tools.get(s.tool);
    return t === undefined || toolKindPolicy(t.kind).hasEffect; // unknown tools count as fallible: when unsure, refuse
  });
  if (later.length === 0) return null;
  const records = await rt.store.listByRun(input.runId);
  const done = (stepId: string) => records.some((r: IntentRecord) => r.stepId === stepId && r.status === "SUCCEEDED");
  const pending = later.filter((s) => !done(s.stepId));
  if (pending.length === 0) return null;
  const names = pending.map((s) => `${s.stepId} (${s.tool})`).join(", ");
  return refusalEnvelope({
    key: input.key,
    effectPhrase: input.effectPhrase,
    error: {
      code: "IRREVERSIBLE_BEFORE_FALLIBLE",
      message: `${tool.name} cannot be undone, and later steps of the plan may still fail: ${names}`,
      field: "stepId",
      rule: "an irreversible step must come after every fallible step of the plan",
    },
    retrySafe: true,
    message: `Do the steps that may still fail first (${names}); send ${tool.name} last, once they succeeded. Nothing was sent.`,
  });
}
