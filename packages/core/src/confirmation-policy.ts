import { confirmationSubject } from "./confirmation-subject.ts";
import type { ConfirmationVerdict } from "./confirmations.ts";
import { type Envelope, refusalEnvelope } from "./envelope.ts";
import { storeClockNow } from "./lease.ts";
import type { Runtime } from "./runtime.ts";
import type { AnyTool } from "./tool.ts";

/** The call as the confirmation policy sees it (schema-parsed arguments). */
export interface ConfirmationPolicyInput {
  runId: string;
  stepId: string;
  args: unknown;
  key: string;
  effectPhrase: string;
  confirmationToken: string | undefined;
}

type Refused = Extract<ConfirmationVerdict, { ok: false }>;

/** Why the token does not do, in words (never an argument's value: only names). */
function whyRefused(verdict: Refused): string {
  switch (verdict.reason) {
    case "malformed":
    case "forged":
      return "the confirmation token is not valid";
    case "expired":
      return "the confirmation token has expired";
    case "another_call":
      return "the confirmation token confirms another call (tool, run, step or identity)";
    case "arguments_differ":
      return `the confirmation token confirmed other values of: ${verdict.fields.join(", ")}`;
    default: {
      const never: never = verdict.reason;
      return never;
    }
  }
}

/**
 * A tool's confirmation policy (issue 4; issue 20 §2): above its threshold a call needs a token that
 * confirms this tenant, run, step, tool, identity and the canonical form of every argument that was
 * shown when it was issued. A call that carries a token is held to it whether or not the policy asks
 * for one (a person confirmed exactly that call). A token for other argument values is refused naming the arguments that
 * differ (`error.field` `args.<first>`), never their values. Expiry is judged by the store's clock
 * (`storeClockNow`), the one `confirmations.issue` stamps it with (rule 9), never a replica's.
 * @returns a FAILED_NO_EFFECT envelope (`CONFIRMATION_REQUIRED`, `retry_safe: true`) when refused, else null.
 * @throws whatever the store throws when its clock must be read and it is unreachable (only with a token).
 */
export async function confirmationRefusal(
  rt: Runtime,
  tool: AnyTool,
  input: ConfirmationPolicyInput,
): Promise<Envelope | null> {
  const token = input.confirmationToken;
  const required = tool.confirmation ? tool.confirmation(input.args) : false;
  // A token given with a call is checked even where the policy asks for none: it says a person
  // confirmed exactly this call, so a call that carries it must be that call.
  if (required === false && token === undefined) return null;
  const reason = required === false ? "the call carries a confirmation token, so the token must confirm it" : required;
  let verdict: Refused | null = null;
  if (token !== undefined) {
    const subject = confirmationSubject(
      { tenant: rt.tenant, runId: input.runId, stepId: input.stepId, tool: tool.name, idempotencyKey: input.key },
      tool,
      input.args,
    );
    // Expiry by the store's clock, as the token was issued (rule 9; issue 21 §6).
    const answer = rt.confirmations?.verify(token, subject, await storeClockNow(rt)) ?? {
      ok: false as const,
      reason: "forged" as const,
      fields: [],
    };
    if (answer.ok) return null;
    verdict = answer;
  }
  const differ = verdict?.reason === "arguments_differ" ? verdict.fields : [];
  const why = verdict ? whyRefused(verdict) : "no confirmation token was given";
  return refusalEnvelope({
    key: input.key,
    effectPhrase: input.effectPhrase,
    error: {
      code: "CONFIRMATION_REQUIRED",
      message: `${reason}; ${why}`,
      field: differ.length > 0 ? `args.${differ[0]}` : "confirmationToken",
      rule:
        differ.length > 0
          ? "must equal the value the confirmation showed"
          : "must be a valid confirmation token for this call (tool, run, step and every argument shown)",
    },
    retrySafe: true,
    message:
      differ.length > 0
        ? `This call differs from what was confirmed (${differ.join(", ")}). Nothing was sent. Call again with exactly the confirmed arguments, or ask the user or an operator to confirm these.`
        : `This needs confirmation first (${reason}). Nothing was sent. Ask the user or an operator to confirm, then call again with the confirmation token.`,
  });
}
