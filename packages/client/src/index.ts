/**
 * `@tristate/client`: a small typed client for the Tristate executor API (plain `fetch`; the API's
 * types are standalone declarations checked against the executor's router at compile time).
 */

export type {
  AbortReport,
  CompensationView,
  Envelope,
  ExecuteWireInput,
  IntentError,
  IntentRecordView,
  IntentStatus,
  JsonValue,
  Outcome,
  PlanAnswer,
  PlanStep,
  ReasonCode,
  Resolution,
  RunAbort,
  StepOutcome,
  StepReport,
  ToolInfo,
  ToolKind,
} from "./api-types.ts";
export {
  createTristateClient,
  type DeadlineLike,
  type ExecuteInput,
  type RequestOptions,
  type TristateClient,
  type TristateClientOptions,
  type TurnTime,
} from "./client.ts";
export {
  API_ERROR_STATUSES,
  type ApiErrorInit,
  type ApiErrorStatus,
  isTristateApiError,
  isTristateTransportError,
  NOT_SENT_ADVICE,
  type TransportErrorInit,
  type TransportOutcome,
  type TransportReason,
  TristateApiError,
  TristateBadRequestError,
  TristateConflictError,
  TristateForbiddenError,
  TristateNotFoundError,
  TristatePayloadTooLargeError,
  TristateRateLimitedError,
  TristateTransportError,
  TristateUnauthorizedError,
  UNKNOWN_ADVICE,
} from "./errors.ts";
export { type ModelEnvelope, type TransportEnvelope, toModelEnvelope } from "./model-envelope.ts";
