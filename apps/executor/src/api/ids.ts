import {
  COMPENSATE_STEP_PREFIX,
  CORRECT_STEP_PREFIX,
  ID_PATTERN,
  ID_RULE_TEXT,
  isCompensationStep,
} from "@tristate/core";
import { z } from "zod";

/** A run or step id, validated by the executor's own rule (so the API answers 400, never a 500). */
export const idSchema = z.string().regex(ID_PATTERN, ID_RULE_TEXT);

/**
 * A step id an agent may use: the executor's own rule, and never in its reserved namespace
 * (`compensate:…`, `correct:…` are the steps of compensating and corrective calls, issue 10): an agent
 * that took one first could squat the compensation of another step.
 */
export const agentStepIdSchema = idSchema.refine((v) => !isCompensationStep(v), {
  message: `must not start with "${COMPENSATE_STEP_PREFIX}" or "${CORRECT_STEP_PREFIX}" (reserved for the executor's compensating and corrective calls)`,
});
