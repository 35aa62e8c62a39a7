/**
 * Compensation registered with the intent (the source design's first compensation rule): the
 * reserved step ids of compensating and corrective calls, and the spec stored on the record.
 */
import { type JsonValue, toJson } from "./json.ts";
import type { AnyTool } from "./tool.ts";

/** Step ids of compensating and corrective calls: `compensate:<original key>`, `correct:<original key>`. */
export const COMPENSATE_STEP_PREFIX = "compensate:";
export const CORRECT_STEP_PREFIX = "correct:";

/** True for records of compensating or corrective calls (they are not themselves compensated). */
export function isCompensationStep(stepId: string): boolean {
  return stepId.startsWith(COMPENSATE_STEP_PREFIX) || stepId.startsWith(CORRECT_STEP_PREFIX);
}

/**
 * The compensation spec registered on the intent record before the call (the source design's
 * first rule): the compensating tool, its arguments once the effect is confirmed (fields from the
 * result are filled in then), and later the compensation's key and outcome.
 */
export function registeredCompensation(tool: AnyTool, args?: unknown, result?: unknown): JsonValue | null {
  const spec = tool.irreversible ? tool.corrective : tool.compensation;
  if (!spec) return null;
  let filled: JsonValue | null = null;
  if (args !== undefined) {
    try {
      filled = (toJson(spec.args(args, result)) ?? null) as JsonValue;
    } catch {
      filled = null; // built again (and reported) when an abort needs it
    }
  }
  return { tool: spec.tool, kind: tool.irreversible ? "corrective" : "compensation", args: filled };
}
