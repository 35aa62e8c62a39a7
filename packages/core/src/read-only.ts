import { classifyError } from "./classify/index.ts";
import type { Deadline } from "./deadline.ts";
import { type Envelope, refusalEnvelope } from "./envelope.ts";
import { isDeadlineExceededError } from "./errors.ts";
import { toJson } from "./json.ts";
import type { Runtime } from "./runtime.ts";
import type { AnyTool } from "./tool.ts";

/**
 * A `read_only` tool call: no intent record, no reconciliation (a lookup has no effect, so a plain
 * retry is fine); the deadline still bounds it.
 */
export async function callReadOnly(
  rt: Runtime,
  tool: AnyTool,
  args: unknown,
  key: string,
  phrase: string,
  deadline: Deadline,
): Promise<Envelope> {
  let timeoutMs: number;
  try {
    timeoutMs = deadline.timeoutFor(tool.timeoutMs, rt.reserveMs, rt.minCallBudgetMs);
  } catch (error) {
    if (!isDeadlineExceededError(error)) throw error;
    return refusalEnvelope({
      key,
      effectPhrase: phrase,
      error: {
        code: "DEADLINE_EXCEEDED",
        message: error.message,
        field: "deadline",
        rule: `must leave at least ${rt.minCallBudgetMs} ms after a ${rt.reserveMs} ms reserve`,
      },
      retrySafe: true,
      message: "Not enough time is left in this turn to run the lookup.",
    });
  }
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException(`timed out after ${timeoutMs} ms`, "TimeoutError")),
    timeoutMs,
  );
  try {
    const value = await tool.invoke(args, {
      idempotencyKey: key,
      signal: controller.signal,
      timeoutMs,
      deadline,
      attempt: 1,
    });
    const result = toJson(value);
    return {
      status: "SUCCEEDED",
      retry_safe: true,
      effect: `${phrase}: read (no effect)`,
      action_taken: "ran the read-only tool",
      message: "Read-only result.",
      idempotency_key: key,
      attempt: 1,
      replayed: false,
      ...(result !== undefined ? { result } : {}),
    };
  } catch (error) {
    const c = classifyError(error);
    return {
      status: "FAILED_NO_EFFECT",
      retry_safe: true,
      effect: `${phrase}: read failed (a read-only tool has no effect)`,
      action_taken: "ran the read-only tool; it failed",
      message: "The lookup failed; it has no side effect, so you may try again.",
      idempotency_key: key,
      attempt: 1,
      replayed: false,
      error: { code: c.code, message: c.message, ...(c.httpStatus !== undefined ? { httpStatus: c.httpStatus } : {}) },
    };
  } finally {
    clearTimeout(timer);
  }
}
