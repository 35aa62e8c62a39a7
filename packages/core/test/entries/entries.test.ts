/**
 * The audience entries (`@tristate/core/tools`, `/store`, `/internal`): together they cover every
 * value and type the root exported when they were made (a missing type fails the typecheck), each
 * name is the root's own binding, and each entry's `@module` example is the code of its example file,
 * which runs.
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as root from "@tristate/core";
import * as internal from "@tristate/core/internal";
import * as store from "@tristate/core/store";
import * as tools from "@tristate/core/tools";
import { describe, expect, expectTypeOf, it } from "vitest";

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The root's values when the entries were made: each stays in the root and is in one entry. */
const ROOT_VALUES_AT_SPLIT = [
  "AMBIGUOUS_CODES",
  "COMPENSATION_KINDS",
  "InvalidArgumentsError",
  "ToolDefinitionError",
  "defaultResendWhenAbsent",
  "isCanonicalisationError",
  "isInvalidArgumentsError",
  "isToolDefinitionError",
  "parseRecordedCompensation",
  "recordedCompensationSchema",
  "toolKindPolicy",
  "AmbiguousError",
  "COMPENSATE_STEP_PREFIX",
  "CORRECT_STEP_PREFIX",
  "CanonicalisationError",
  "DEFAULT_CONFIRMATION_TTL_MS",
  "DEFAULT_KEY_RETENTION_MS",
  "DEFAULT_RESERVE_MS",
  "DEFAULT_TENANT",
  "Deadline",
  "DeadlineExceededError",
  "IDEMPOTENCY_KEY_HEADER",
  "ID_PATTERN",
  "ID_RULE_TEXT",
  "INTENT_EVENT_TYPES",
  "INTENT_STATUSES",
  "LONE_SURROGATE_RULE_TEXT",
  "MAX_OPERATOR_NOTE_CHARS",
  "MIN_CALL_BUDGET_MS",
  "MemoryIntentStore",
  "NOT_SENT_CODES",
  "NUL_RULE_TEXT",
  "NotSentError",
  "OPERATOR_ACTIONS",
  "OPERATOR_ACTION_ID_RULE",
  "OPERATOR_ERROR_CODES",
  "OUTCOMES",
  "OperatorActionError",
  "REASON_CODES",
  "REQUEST_DEADLINE_HEADER",
  "RESOLUTIONS",
  "RETRY_SAFE_PROMPT_RULE",
  "RejectedError",
  "SECRET_LAST4_FROM_CHARS",
  "SECRET_MASK",
  "TENANT_PATTERN",
  "TENANT_RULE_TEXT",
  "TOOL_KINDS",
  "attemptKey",
  "buildEnvelope",
  "callHttp",
  "canon",
  "canonicalIdentity",
  "checkTenant",
  "classifyError",
  "classifyHttpStatus",
  "classifyInvokeFailure",
  "createConfirmationTokens",
  "createExecutor",
  "defineTool",
  "findBadText",
  "idempotencyKey",
  "invalidArgs",
  "invokeTracked",
  "isAmbiguousError",
  "isCompensationStep",
  "isDeadlineExceededError",
  "isNotSentError",
  "isOperatorActionError",
  "isOperatorStore",
  "isRefusedUnderKey",
  "isRejectedError",
  "isSettled",
  "isUnsettled",
  "latestChange",
  "maskSecret",
  "nextSweepLimit",
  "operatorOptions",
  "parseRetryAfterMs",
  "readPath",
  "redactArgs",
  "redactSecrets",
  "refusalEnvelope",
  "refusedUnderKey",
  "secretMasker",
  "startSweepLoop",
  "stateName",
  "sweepStale",
  "systemClock",
  "textRuleBroken",
  "toJson",
  "waitingForHuman",
  "wireKey",
];

const ENTRIES = { tools, store, internal } as const;

describe("@tristate/core's audience entries", () => {
  it("cover every value the root exported at the split, which the root still exports", () => {
    const inEntries = new Set(Object.values(ENTRIES).flatMap((entry) => Object.keys(entry)));
    expect(ROOT_VALUES_AT_SPLIT.filter((name) => !(name in root))).toEqual([]);
    expect(ROOT_VALUES_AT_SPLIT.filter((name) => !inEntries.has(name))).toEqual([]);
  });

  it("export the root's own bindings, nothing of their own", () => {
    for (const [entryName, entry] of Object.entries(ENTRIES)) {
      for (const [name, value] of Object.entries(entry)) {
        expect({ entry: entryName, name, same: (root as Record<string, unknown>)[name] === value }).toEqual({
          entry: entryName,
          name,
          same: true,
        });
      }
    }
  });

  it.each([
    ["tools", "examples/tools.ts"],
    ["store", "examples/store.test.ts"],
    ["internal", "examples/internal.ts"],
  ])("the %s entry's @module example is the code of %s", (entry, example) => {
    const doc = readFileSync(resolve(packageDir, `src/entry/${entry}.ts`), "utf8");
    const block = /@example\n \* ```ts\n([\s\S]*?)\n \* ```/.exec(doc)?.[1];
    expect(block).toBeDefined();
    const code = block!
      .split("\n")
      .map((line) => line.replace(/^ \* ?/, ""))
      .join("\n");
    expect(readFileSync(resolve(packageDir, example), "utf8")).toContain(code);
  });

  it("the tools example runs: one refund for two calls, the second a replay", async () => {
    const { envelopes } = await import("../../examples/tools.ts");
    expect(envelopes.map((e) => [e.status, e.replayed])).toEqual([
      ["SUCCEEDED", false],
      ["SUCCEEDED", true],
    ]);
  });

  it("the internal example runs: a canonical identity, the bad text found, a token that verifies", async () => {
    const { seen } = await import("../../examples/internal.ts");
    expect(seen.identity).toEqual({ order_id: "A-1182", amount: "49.90" });
    expect(seen.badText?.path).toEqual(["note"]);
    expect(seen.ok).toBe(true);
  });
  it("export every type the root exports, each from its audience entry (the typecheck fails on a missing one)", () => {
    expectTypeOf<
      [
        internal.BadText,
        internal.ConfirmationTokens,
        internal.ConfirmationVerifier,
        internal.EnvelopeContext,
        internal.InvokeAttempt<unknown>,
        internal.InvokeFailureEvidence,
        internal.OperatorActionInput,
        internal.OperatorActionResult,
        internal.OperatorActor,
        internal.OperatorErrorCode,
        internal.OperatorOptions,
        internal.ProbeAnswer,
        internal.ProbeRerunReport,
        internal.ResolutionWinner,
        internal.SecretMasker,
        internal.ToolKindPolicy,
        store.AuditEntry,
        store.ClaimResult,
        store.CompensationKind,
        store.IntentError,
        store.IntentEvent,
        store.IntentEventType,
        store.IntentPatch,
        store.IntentRecord,
        store.IntentStore,
        store.LeasedRecord,
        store.NewIntentRecord,
        store.OperatorAction,
        store.OperatorApplyResult,
        store.OperatorChange,
        store.OperatorStore,
        store.PlanStep,
        store.RanCompensation,
        store.RecordedCompensation,
        store.RegisteredCompensation,
        store.StoredIntentEvent,
        store.WriteOptions,
        tools.AbortReport,
        tools.AnyTool,
        tools.CallInput,
        tools.Canonicaliser,
        tools.Classification,
        tools.ClassifyOptions,
        tools.Clock,
        tools.CompensationSpec<unknown, unknown>,
        tools.EffectRef,
        tools.Envelope,
        tools.Executor,
        tools.ExecutorOptions,
        tools.FieldFault,
        tools.HttpCallContext,
        tools.HttpRequest,
        tools.HttpResponse,
        tools.HttpStatusVerdict,
        tools.IntentStatus,
        tools.InvokeContext,
        tools.JsonObject,
        tools.JsonValue,
        tools.Outcome,
        tools.ProbeContext,
        tools.ProbeOptions,
        tools.ReasonCode,
        tools.RefusedUnderKey,
        tools.Resolution,
        tools.StepOutcome,
        tools.StepReport,
        tools.SweepLoop,
        tools.SweepLoopOptions,
        tools.SweepOptions,
        tools.SweepReport,
        tools.Tool,
        tools.ToolErrorFields,
        tools.ToolKind,
        tools.ToolSpec,
      ]
    >().not.toBeNever();
  });
});
