/**
 * Run and step ids under MCP (issue 11 §3). MCP carries no plan step, and a client's JSON-RPC
 * request id changes on every retry, so the rule is:
 *
 * 1. `params._meta["io.tristate/runId"]` and `params._meta["io.tristate/stepId"]` when the client
 *    gives them (the same rules as `calls.execute`: 1–200 printable ASCII characters without spaces;
 *    no `compensate:`/`correct:` step).
 * 2. Otherwise the run is the default scope (default-scope.ts): the API key's id and a time window
 *    (`TRISTATE_MCP_DEFAULT_SCOPE_MS`), never the MCP session, which lives in one process's memory
 *    (rule 15). The session id stays a transport concept.
 * 3. Otherwise the step is the tool and its canonical identity: `mcp:<tool>:<16 hex of SHA-256 of the
 *    canonical identity>`. A repeat of the same tool with the same identity in the same run is the
 *    same step — a client that timed out (-32001), cancelled, lost its session and called again gets
 *    the first call's outcome replayed or reconciled, never a second effect. Two deliberate calls with
 *    the same identity need two step ids (`io.tristate/stepId`).
 */
import type { AnyTool } from "@tristate/core";
import { identityStep } from "../api/identity-step.ts";
import { agentStepIdSchema, idSchema } from "../api/ids.ts";

/** `_meta` key of the run id. */
export const META_RUN_ID = "io.tristate/runId";
/** `_meta` key of the step id. */
export const META_STEP_ID = "io.tristate/stepId";
/** `_meta` key of the turn's deadline, epoch ms (optional; default: `TRISTATE_DEFAULT_BUDGET_MS` from now). */
export const META_DEADLINE = "io.tristate/deadlineEpochMs";
/** `_meta` key of a confirmation token (`confirmations.issue`) for tools with a confirmation policy. */
export const META_CONFIRMATION = "io.tristate/confirmationToken";

/** A `_meta` value that breaks its rule. */
export class MetaError extends Error {
  override readonly name = "MetaError";
  /** The `_meta` key at fault, e.g. `io.tristate/stepId`. */
  readonly field: string;
  constructor(field: string, rule: string) {
    super(`_meta["${field}"]: ${rule}`);
    this.field = field;
  }
}

/**
 * The step of one `tools/call`, and its run when `_meta` names one (else undefined: the default scope).
 * @throws MetaError when a given run or step id breaks its rule.
 */
export function stepAndNamedRun(
  meta: Record<string, unknown> | undefined,
  toolName: string,
  tool: AnyTool | undefined,
  args: Record<string, unknown>,
): { runId: string | undefined; stepId: string } {
  const runId = checked(meta, META_RUN_ID, idSchema);
  const stepId = checked(meta, META_STEP_ID, agentStepIdSchema) ?? identityStep("mcp", toolName, tool, args);
  return { runId, stepId };
}

function checked(
  meta: Record<string, unknown> | undefined,
  key: string,
  schema: typeof idSchema | typeof agentStepIdSchema,
): string | undefined {
  const value = meta?.[key];
  if (value === undefined) return undefined;
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new MetaError(key, parsed.error.issues[0]?.message ?? "is invalid");
  return parsed.data;
}
