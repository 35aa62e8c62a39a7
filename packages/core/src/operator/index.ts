/**
 * Operator actions on records waiting for a human (confirm, resend, compensate), audited through the
 * `OperatorStore` port. One file per action; `resolve.ts` validates and dispatches; `errors.ts` is a
 * leaf that other core modules may import without pulling in the rest.
 */
export {
  isOperatorActionError,
  OPERATOR_ERROR_CODES,
  OperatorActionError,
  type OperatorErrorCode,
} from "./errors.ts";
export {
  MAX_OPERATOR_NOTE_CHARS,
  OPERATOR_ACTION_ID_RULE,
  type OperatorActionInput,
  type OperatorActionResult,
  type OperatorActor,
} from "./input.ts";
export { latestChange, type ResolutionWinner } from "./latest-change.ts";
export { type OperatorOptions, operatorOptions, stateName, waitingForHuman } from "./options.ts";
export { resolveIntent } from "./resolve.ts";
