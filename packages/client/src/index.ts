/**
 * `@tristate/client`: a small typed client for the Tristate executor API (plain `fetch`; the API's
 * types come from the executor's router type, nothing of the server is loaded at run time).
 */
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
export type {
  AbortReport,
  Envelope,
  ExecuteWireInput,
  IntentRecordView,
  Outcome,
  PlanAnswer,
  PlanStep,
  RouterInputs,
  RouterOutputs,
  ToolInfo,
} from "./router-types.ts";
