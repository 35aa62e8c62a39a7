/**
 * What the three SDK adapters share: which step a call belongs to, the turn's deadline, running a
 * call and turning its failures into what the model reads. Depends on `@tristate/client` only.
 */
import {
  type ModelEnvelope,
  type ToolInfo,
  type TristateClient,
  type TurnTime,
  toModelEnvelope,
} from "@tristate/client";

/** A tool call as the SDK hands it over. */
export interface ToolCallInfo {
  /** The catalog's tool name. */
  tool: string;
  /** The arguments the model gave (validated by the executor). */
  args: Record<string, unknown>;
  /** The SDK's id of this tool call; it changes on every retry, so it is never the step by default. */
  toolCallId: string | undefined;
}

/** Options shared by every adapter's `tristateTools`. */
export interface TristateToolsOptions {
  /** The run every call belongs to (1–200 printable ASCII characters, no spaces). */
  runId: string;
  /**
   * The step of the run: a string, or a function of the call. The same run, step, tool and identity
   * is one effect, however often the model repeats it; so the step must not change when the model
   * retries (never use the SDK's tool call id). Two deliberate effects of one tool with different
   * identities (two refunds) need two steps; with one fixed step the second is refused
   * (`IDEMPOTENCY_CONFLICT`, nothing sent). @default none: the executor derives the step from the
   * tool and the arguments' canonical identity (`auto:<tool>:<hash>`), the same rule as under MCP —
   * a repeat (however reworded) is the same step, another identity is another step, and two
   * deliberate calls with the same identity need a step function that tells them apart.
   */
  stepId?: string | ((call: ToolCallInfo) => string);
  /**
   * The turn's one deadline, epoch ms, passed to every call as `deadlineEpochMs` (a function is
   * read at each call, e.g. to follow the current turn). Without it and `budgetMs` the executor's
   * default budget applies.
   */
  deadlineEpochMs?: number | (() => number | undefined);
  /** Or a budget from each call's start, ms. */
  budgetMs?: number;
  /** Only these catalog tools (default: all of them). */
  only?: readonly string[];
  /** The catalog, when already fetched (`client.tools()`); else it is fetched once. */
  catalog?: readonly ToolInfo[];
}

/**
 * The catalog entries to expose: `options.catalog` or `tools.list`, filtered by `options.only`.
 * @throws TypeError naming a tool of `only` that is not in the catalog.
 * @throws TristateApiError / TristateTransportError from `tools.list`.
 */
export async function selectTools(client: TristateClient, options: TristateToolsOptions): Promise<ToolInfo[]> {
  const catalog = options.catalog ?? (await client.tools());
  if (!options.only) return [...catalog];
  const names = new Set(catalog.map((t) => t.name));
  for (const name of options.only) {
    if (!names.has(name)) throw new TypeError(`tool "${name}" is not in the executor's catalog`);
  }
  return catalog.filter((t) => options.only!.includes(t.name));
}

/** The tool's description for the model, with what its result is. */
export function describeTool(info: ToolInfo): string {
  const what = info.description ?? info.name.replaceAll("_", " ");
  return `${what}. Runs through Tristate: the result is an envelope; read its status and retry_safe.`;
}

/** The turn time of one call. */
function turnTime(options: TristateToolsOptions): TurnTime {
  const deadlineEpochMs =
    typeof options.deadlineEpochMs === "function" ? options.deadlineEpochMs() : options.deadlineEpochMs;
  if (deadlineEpochMs !== undefined) return { deadlineEpochMs };
  return options.budgetMs !== undefined ? { budgetMs: options.budgetMs } : {};
}

/**
 * Runs one call through the executor and returns what the model reads: the Envelope as is; for a
 * refused call that carries one (invalid arguments, unknown tool), that envelope; for no answer, an
 * envelope with the transport outcome and the advice to repeat the same call.
 * @throws TristateApiError for problems of the agent's setup (bad key, role, size limits,
 *   throttling, bad run or step ids): the model cannot fix those.
 */
export async function runTool(
  client: TristateClient,
  options: TristateToolsOptions,
  call: ToolCallInfo,
  signal?: AbortSignal,
): Promise<ModelEnvelope> {
  const stepId = typeof options.stepId === "function" ? options.stepId(call) : options.stepId;
  try {
    return await client.execute(
      {
        runId: options.runId,
        ...(stepId !== undefined ? { stepId } : {}),
        tool: call.tool,
        args: call.args,
        ...turnTime(options),
      },
      signal ? { signal } : {},
    );
  } catch (error) {
    const envelope = toModelEnvelope(error);
    if (envelope) return envelope;
    throw error;
  }
}

/**
 * The agent's instructions with the system-prompt rule for envelopes appended (`prompt.rule`):
 * when `retry_safe` is false, report instead of calling again.
 * @param base the agent's own instructions (default: none).
 */
export async function tristateInstructions(client: TristateClient, base = ""): Promise<string> {
  const rule = await client.promptRule();
  return base ? `${base.trimEnd()}\n\n${rule}` : rule;
}

/** Arguments as a plain object (an SDK may hand over anything the model produced). */
export function argsObject(input: unknown): Record<string, unknown> {
  return typeof input === "object" && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
}
