import type { ZodError } from "zod";
import { CanonicalisationError } from "./canon.ts";
import { type Envelope, refusalEnvelope } from "./envelope.ts";
import type { CallInput } from "./executor.ts";
import { canonicalIdentity, idempotencyKey } from "./idempotency-key.ts";
import { ID_PATTERN } from "./ids.ts";
import type { PlanStep } from "./intent-store.ts";
import type { Runtime } from "./runtime.ts";
import type { AnyTool } from "./tool.ts";

const ID_RULE = ID_PATTERN;

/** The FAILED_NO_EFFECT envelope for arguments that fail the tool's schema or identity rules. */
export function invalidArgs(tool: AnyTool, name: string, issue: { field: string; rule: string }): Envelope {
  return refusalEnvelope({
    key: "",
    effectPhrase: tool.describe ? name : name,
    error: { code: "INVALID_ARGUMENTS", message: `${issue.field} ${issue.rule}`, field: issue.field, rule: issue.rule },
    retrySafe: true,
    message: `The arguments are invalid: ${issue.field} ${issue.rule}. Fix them and call again; nothing was sent.`,
  });
}

/** The first zod issue as `{ field, rule }` (field as a dot path). */
export function zodIssue(error: ZodError): { field: string; rule: string } {
  const issue = error.issues[0];
  if (!issue) return { field: "args", rule: "are invalid" };
  const field = issue.path.length ? issue.path.map(String).join(".") : "args";
  return { field, rule: issue.message };
}

/** Validates and stores a run's plan (see `Executor.declarePlan`). */
export async function declarePlan(rt: Runtime, runId: string, steps: PlanStep[]): Promise<void> {
  if (typeof runId !== "string" || !ID_RULE.test(runId))
    throw new TypeError("declarePlan: runId must be a non-empty printable string");
  if (!Array.isArray(steps) || steps.length === 0) throw new TypeError("declarePlan: steps must be a non-empty array");
  const seen = new Set<string>();
  steps.forEach((s, i) => {
    if (typeof s?.stepId !== "string" || !ID_RULE.test(s.stepId))
      throw new TypeError(`declarePlan: steps[${i}].stepId must be a non-empty printable string`);
    if (typeof s.tool !== "string" || s.tool === "")
      throw new TypeError(`declarePlan: steps[${i}].tool must name a tool`);
    if (seen.has(s.stepId)) throw new TypeError(`declarePlan: steps[${i}].stepId "${s.stepId}" appears twice`);
    seen.add(s.stepId);
  });
  await rt.store.savePlan(
    runId,
    steps.map((s) => ({ stepId: s.stepId, tool: s.tool })),
    rt.clock.nowEpochMs(),
  );
}

/** The key a call would get (see `Executor.keyFor`). */
export function keyFor(rt: Runtime, input: Omit<CallInput, "deadline" | "confirmationToken">): string {
  const tool = rt.tools.get(input.tool);
  if (!tool) throw new TypeError(`keyFor: tool "${input.tool}" is not in the catalog`);
  let args: unknown = input.args;
  if (tool.args) {
    const parsed = tool.args.safeParse(input.args);
    if (!parsed.success) {
      const issue = zodIssue(parsed.error);
      throw new TypeError(`keyFor: args.${issue.field} ${issue.rule}`);
    }
    args = parsed.data;
  }
  try {
    return idempotencyKey(input.runId, input.stepId, tool.name, canonicalIdentity(args, tool.identity));
  } catch (error) {
    if (error instanceof CanonicalisationError) throw new TypeError(`keyFor: args.${error.field} ${error.rule}`);
    throw error;
  }
}
