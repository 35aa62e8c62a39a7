import type { ZodError } from "zod";
import { isCanonicalisationError } from "./canon.ts";
import { type ConfirmationSubject, confirmationSubject } from "./confirmation-subject.ts";
import type { Deadline } from "./deadline.ts";
import { InvalidArgumentsError } from "./definition-errors.ts";
import { type Envelope, refusalEnvelope } from "./envelope.ts";
import { canonicalIdentity, idempotencyKey } from "./idempotency-key.ts";
import { ID_PATTERN } from "./ids.ts";
import type { PlanStep } from "./intent-store.ts";
import type { Runtime } from "./runtime.ts";
import { findBadText } from "./text.ts";
import type { AnyTool } from "./tool.ts";

const ID_RULE = ID_PATTERN;

/** One tool call from an agent. */
export interface CallInput {
  /** The agent run (one conversation or job). */
  runId: string;
  /** The plan step within the run; a retry of the step reuses it, a new effect gets a new one. */
  stepId: string;
  /** Tool name from the catalog. */
  tool: string;
  /** Arguments as the model produced them (validated by the tool's schema). */
  args: unknown;
  /** The turn's deadline (one per turn, shared by every call in it). */
  deadline: Deadline;
  /** Proof that an operator or the end user confirmed this call, for tools with a confirmation policy. */
  confirmationToken?: string;
}

/** Persisted arguments that no longer pass the tool's schema (the catalog changed since they were stored). */
export class StoredArgsError extends TypeError {
  override readonly name = "StoredArgsError";
  constructor(
    readonly field: string,
    readonly rule: string,
  ) {
    super(`the stored arguments no longer pass the tool's schema: ${field} ${rule}`);
  }
}

/**
 * The persisted arguments as the tool's `invoke` and probes receive them. What is persisted is the
 * call's validated *input* (as JSON), never the schema's output, so parsing it again gives exactly
 * what the first send got — a `z.coerce.date()` field is a `Date`, a transform runs once — on first
 * sends, resends, operator resends and probes alike (issue 9 §6). Without a schema, the JSON as stored.
 * @throws StoredArgsError when the stored arguments fail the schema (nothing may be sent then).
 */
export function parseStoredArgs(tool: AnyTool, stored: unknown): unknown {
  if (!tool.args) return stored;
  const parsed = tool.args.safeParse(stored);
  if (parsed.success) return parsed.data;
  const issue = zodIssue(parsed.error);
  throw new StoredArgsError(issue.field, issue.rule);
}

/**
 * The FAILED_NO_EFFECT envelope (`INVALID_ARGUMENTS`, `retry_safe: true`, empty key, nothing
 * recorded or sent) for arguments that fail the tool's schema, identity or text rules.
 * @param issue the field as a dot path (e.g. `subject`, `items.0.sku`) and the rule it broke.
 */
export function invalidArgs(name: string, issue: { field: string; rule: string }): Envelope {
  return refusalEnvelope({
    key: "",
    effectPhrase: name,
    error: { code: "INVALID_ARGUMENTS", message: `${issue.field} ${issue.rule}`, field: issue.field, rule: issue.rule },
    retrySafe: true,
    message: `The arguments are invalid: ${issue.field} ${issue.rule}. Fix them and call again; nothing was sent.`,
  });
}

/**
 * The zod issue to report as `{ field, rule }` (field as a dot path): an unknown key first, else the
 * first issue — a misspelt `order_idd` names the unknown key, not only the `order_id` it leaves missing.
 */
export function zodIssue(error: ZodError): { field: string; rule: string } {
  const issue = error.issues.find((i) => i.code === "unrecognized_keys") ?? error.issues[0];
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

/**
 * The key a call would get (see `Executor.keyFor`).
 * @throws InvalidArgumentsError (a TypeError, message `keyFor: <field> <rule>`) for an unknown tool
 *   (field `tool`) or arguments that fail the tool's schema, the text rules or an identity
 *   canonicaliser (field `args.<path>`).
 */
export function keyFor(rt: Runtime, input: Omit<CallInput, "deadline" | "confirmationToken">): string {
  return parseCall(rt, input, "keyFor").key;
}

/** What a confirmation of a call confirms, and the schema-parsed arguments it binds (see `Executor.confirmationFor`). */
export interface ConfirmationRequest {
  subject: ConfirmationSubject;
  /** The arguments after the tool's schema (defaults filled): what the confirmation shows and binds. */
  parsedArgs: unknown;
}

/**
 * What a confirmation token for a call would confirm (see `Executor.confirmationFor`).
 * @throws InvalidArgumentsError (message `confirmationFor: <field> <rule>`) as {@link keyFor} does.
 */
export function confirmationFor(
  rt: Runtime,
  input: Omit<CallInput, "deadline" | "confirmationToken">,
): ConfirmationRequest {
  const { tool, args, key } = parseCall(rt, input, "confirmationFor");
  const call = { tenant: rt.tenant, runId: input.runId, stepId: input.stepId, tool: tool.name, idempotencyKey: key };
  return { subject: confirmationSubject(call, tool, args), parsedArgs: args };
}

function parseCall(
  rt: Runtime,
  input: Omit<CallInput, "deadline" | "confirmationToken">,
  operation: string,
): { tool: AnyTool; args: unknown; key: string } {
  const tool = rt.tools.get(input.tool);
  const refuse = (field: string, rule: string) =>
    new InvalidArgumentsError(operation, { tool: input.tool, field, rule });
  if (!tool) throw refuse("tool", `"${input.tool}" is not in the catalog`);
  let args: unknown = input.args;
  if (tool.args) {
    const parsed = tool.args.safeParse(input.args);
    if (!parsed.success) {
      const issue = zodIssue(parsed.error);
      throw refuse(`args.${issue.field}`, issue.rule);
    }
    args = parsed.data;
  }
  const badText = findBadText(input.args);
  if (badText) throw refuse(["args", ...badText.path].join("."), badText.rule);
  try {
    const key = idempotencyKey(input.runId, input.stepId, tool.name, canonicalIdentity(args, tool.identity), rt.tenant);
    return { tool, args, key };
  } catch (error) {
    if (isCanonicalisationError(error)) throw refuse(`args.${error.field}`, error.rule);
    throw error;
  }
}

/**
 * The persisted arguments for the tool's cosmetic and bookkeeping hooks (`describe`, a compensation's
 * `args`): schema-parsed like {@link parseStoredArgs}, or as stored when they no longer parse.
 */
export function storedArgsForHooks(tool: AnyTool | undefined, stored: unknown): unknown {
  if (!tool) return stored;
  try {
    return parseStoredArgs(tool, stored);
  } catch {
    return stored;
  }
}
