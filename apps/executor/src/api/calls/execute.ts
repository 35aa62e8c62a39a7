import { Deadline, type Envelope, MAX_CONFIRMATION_TOKEN_CHARS } from "@tristate/core";
import { z } from "zod";
import { AppError } from "../../app-error.ts";
import { type Arrival, arrivalNow, sinceArrivalMs } from "../../arrival.ts";
import { agentProcedure } from "../../trpc/init.ts";
import { identityStep } from "../identity-step.ts";
import { agentStepIdSchema, idSchema } from "../ids.ts";
import { actingTenant, tenantInput } from "../tenancy.ts";
import { refuseInexactArgs } from "./exact-args.ts";

/** Deadlines further ahead than this are refused as absurd rather than capped, ms (24 h). */
export const ABSURD_DEADLINE_MS = 24 * 3600_000;

const id = idSchema;

/** Input of `calls.execute`: one tool call of an agent's turn. */
export const executeInput = z
  .object({
    runId: id,
    /**
     * The step of the run. Absent: the tool and its canonical identity (`auto:<tool>:<hash>`, see
     * `identity-step.ts`) — a repeat with the same identity is the same step (replayed or reconciled),
     * another identity is another step; two deliberate calls with the same identity need named steps.
     */
    stepId: agentStepIdSchema.optional(),
    tool: z.string().min(1, "must not be empty").max(128),
    args: z.record(z.string(), z.unknown()),
    /** The turn's deadline, epoch ms (forward the one deadline of the turn to every call). */
    deadlineEpochMs: z.number().int().positive().optional(),
    /** Or: the budget, ms, counted from when the request arrived. */
    budgetMs: z.number().int().positive().optional(),
    /**
     * Proof that an operator or the end user confirmed this call (`confirmations.issue`), for tools
     * with a confirmation policy: it confirms this run, step, tool and every argument value shown.
     */
    confirmationToken: z.string().min(1).max(MAX_CONFIRMATION_TOKEN_CHARS).optional(),
    /** The tenant to act in (admin keys only; others act in their key's tenant). */
    tenant: tenantInput,
  })
  .strict()
  .refine((v) => !(v.deadlineEpochMs !== undefined && v.budgetMs !== undefined), {
    message: "give deadlineEpochMs or budgetMs, not both",
    path: ["budgetMs"],
  });

/**
 * The caller's deadline, capped by the service's own limit. A budget (given, or the default) counts
 * from the request's arrival, not from now: time spent before the procedure ran (the key check) is
 * part of it. A past deadline or one more than {@link ABSURD_DEADLINE_MS} ahead is refused (it is a
 * bug, not a budget).
 * @param at the request's arrival (arrival.ts), or now as epoch ms (a request that arrives now).
 * @param limits `TRISTATE_MAX_BUDGET_MS` and `TRISTATE_DEFAULT_BUDGET_MS`, ms.
 * @throws AppError BAD_INPUT naming the field.
 */
export function resolveDeadline(
  input: { deadlineEpochMs?: number | undefined; budgetMs?: number | undefined },
  at: Arrival | number,
  limits: { maxBudgetMs: number; defaultBudgetMs: number },
): Deadline {
  const arrival = typeof at === "number" ? arrivalNow(at) : at;
  // Whole ms, rounded up: deadlines are integer epoch ms (the `Request-Deadline` header) and never later.
  const elapsedMs = Math.ceil(sinceArrivalMs(arrival));
  const nowEpochMs = arrival.epochMs + elapsedMs;
  if (input.deadlineEpochMs !== undefined) {
    if (input.deadlineEpochMs <= nowEpochMs) {
      throw new AppError("BAD_INPUT", `deadlineEpochMs is in the past (${input.deadlineEpochMs} ≤ now ${nowEpochMs})`, {
        field: "deadlineEpochMs",
      });
    }
    if (input.deadlineEpochMs - nowEpochMs > ABSURD_DEADLINE_MS) {
      throw new AppError(
        "BAD_INPUT",
        "deadlineEpochMs is more than 24 h ahead: pass the turn's deadline in epoch milliseconds",
        { field: "deadlineEpochMs" },
      );
    }
    return Deadline.at(Math.min(input.deadlineEpochMs, arrival.epochMs + limits.maxBudgetMs));
  }
  if (input.budgetMs !== undefined) {
    if (input.budgetMs > ABSURD_DEADLINE_MS) {
      throw new AppError("BAD_INPUT", "budgetMs is more than 24 h: pass milliseconds", { field: "budgetMs" });
    }
    return Deadline.after(Math.min(input.budgetMs, limits.maxBudgetMs) - elapsedMs);
  }
  return Deadline.after(limits.defaultBudgetMs - elapsedMs);
}

/** `calls.execute` → the Envelope of one side-effecting (or read-only) tool call. */
export const callsExecuteProcedure = agentProcedure
  .input(executeInput)
  .mutation(async ({ ctx, input }): Promise<Envelope> => {
    const { services } = ctx;
    const deadline = resolveDeadline(input, ctx.arrival, {
      maxBudgetMs: services.env.TRISTATE_MAX_BUDGET_MS,
      defaultBudgetMs: services.env.TRISTATE_DEFAULT_BUDGET_MS,
    });
    const tenant = await actingTenant(ctx, input.tenant);
    const executor = services.tenants.executor(tenant);
    refuseInexactArgs(executor.tools.get(input.tool), input.args, ctx.inexactNumbers ?? []);
    const stepId = input.stepId ?? identityStep("auto", input.tool, executor.tools.get(input.tool), input.args);
    const envelope = await executor.call({
      runId: input.runId,
      stepId,
      tool: input.tool,
      args: input.args,
      deadline,
      ...(input.confirmationToken ? { confirmationToken: input.confirmationToken } : {}),
    });
    services.logger.info(
      {
        idempotency_key: envelope.idempotency_key || undefined,
        tool: input.tool,
        run_id: input.runId,
        step_id: stepId,
        status: envelope.status,
        replayed: envelope.replayed,
        attempt: envelope.attempt,
        code: envelope.error?.code,
        caller: ctx.auth.name,
        tenant,
      },
      "calls.execute",
    );
    if (envelope.error?.code === "UNKNOWN_TOOL") {
      throw new AppError("NOT_FOUND", envelope.error.message, { field: "tool", detail: envelope });
    }
    if (envelope.error?.code === "INVALID_ARGUMENTS") {
      const field = envelope.error.field === "args" || !envelope.error.field ? "args" : `args.${envelope.error.field}`;
      throw new AppError("BAD_INPUT", `${field}: ${envelope.error.rule}`, { field, detail: envelope });
    }
    return envelope;
  });
