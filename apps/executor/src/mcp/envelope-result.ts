/**
 * The Envelope as an MCP tool result: `structuredContent` is the Envelope itself (the contract),
 * `content` a text rendering for clients that read only text, and UNKNOWN and FAILED_NO_EFFECT are
 * `isError: true` results whose first text block is the envelope's message.
 */

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type Envelope, OUTCOMES, REASON_CODES, RESOLUTIONS } from "@tristate/core";

/**
 * JSON Schema (draft 2020-12) of the Envelope: the `outputSchema` of every tool Tristate exposes over
 * MCP. Open to further properties, so that a newer executor's fields do not fail an older client's
 * validation.
 */
export const ENVELOPE_OUTPUT_SCHEMA = {
  type: "object",
  description:
    "Tristate's envelope: the outcome of the call (SUCCEEDED, FAILED_NO_EFFECT or UNKNOWN) and whether calling again is safe.",
  properties: {
    status: { type: "string", enum: [...OUTCOMES], description: "One of the three outcomes." },
    retry_safe: {
      type: "boolean",
      description: "False when an effect may exist unconfirmed: then report the status instead of calling again.",
    },
    effect: { type: "string", description: "What happened in the world, in one sentence." },
    action_taken: { type: "string", description: "What the executor did." },
    message: { type: "string", description: "What to do next." },
    idempotency_key: { type: "string", description: "The executor-derived idempotency key." },
    attempt: { type: "integer", minimum: 0, description: "Attempt number of the record (1-based)." },
    replayed: {
      type: "boolean",
      description: "True when the answer came from the intent log and nothing was sent now.",
    },
    result: { description: "The tool's result (SUCCEEDED), or what a probe found." },
    resolution: { type: "string", enum: [...RESOLUTIONS], description: "How an UNKNOWN was (or is to be) resolved." },
    error: {
      type: "object",
      properties: {
        code: { type: "string", enum: [...REASON_CODES] },
        message: { type: "string" },
        httpStatus: { type: "integer" },
        retryAfterMs: { type: "number" },
        retryNotBeforeEpochMs: { type: "number" },
        field: { type: "string" },
        rule: { type: "string" },
      },
      required: ["code", "message"],
    },
    retry_after_ms: { type: "number", description: "Wait this long (ms) before calling again." },
    sent_key: { type: "string" },
    sent_args: {},
  },
  required: ["status", "retry_safe", "effect", "action_taken", "message", "idempotency_key", "attempt", "replayed"],
} as const;

/**
 * The MCP result of one call: the Envelope as `structuredContent`; `content` holds the message (first
 * block) and the Envelope as JSON (second block, for clients that do not read `structuredContent`).
 * `isError` is true for UNKNOWN and FAILED_NO_EFFECT.
 */
export function envelopeResult(envelope: Envelope): CallToolResult {
  const isError = envelope.status !== "SUCCEEDED";
  return {
    content: [
      { type: "text", text: envelope.message },
      { type: "text", text: JSON.stringify(envelope) },
    ],
    structuredContent: envelope as unknown as Record<string, unknown>,
    ...(isError ? { isError: true } : {}),
  };
}
