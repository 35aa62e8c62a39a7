/**
 * Errors of a tool's declaration and of a call's arguments, structured where they are thrown: each
 * carries the tool, the field at fault and the rule it broke, so no caller parses the message back.
 * Both are `TypeError`s (a programming or input mistake, never a transport failure), branded like
 * the classification errors of `errors.ts`: `isToolDefinitionError` and `isInvalidArgumentsError`
 * recognise them from any copy of this package.
 */
import { brandError, errorKindOf } from "./brand.ts";

/** Where a declaration or a call's input breaks a rule. */
export interface FieldFault {
  /** The tool's name as given (may be empty or invalid when `field` is `name`). */
  readonly tool: string;
  /**
   * The field at fault, as a dot path: inside the declaration for a {@link ToolDefinitionError}
   * (`timeoutMs`, `identity.amount`, `secretFields.0`); inside the call's input for an
   * {@link InvalidArgumentsError} (`args.amount`, `args.items.0.sku`, `tool`).
   */
  readonly field: string;
  /** The rule it broke, e.g. `must be a positive number of milliseconds`. */
  readonly rule: string;
}

/**
 * A tool declaration `defineTool` refuses. The message is `defineTool("<tool>"): <field> <rule>`,
 * e.g. `defineTool("issue_refund"): timeoutMs must be a positive number of milliseconds`.
 */
export class ToolDefinitionError extends TypeError implements FieldFault {
  override readonly name = "ToolDefinitionError";
  readonly tool: string;
  readonly field: string;
  readonly rule: string;
  constructor(fault: FieldFault) {
    super(`defineTool(${JSON.stringify(fault.tool)}): ${fault.field} ${fault.rule}`);
    this.tool = fault.tool;
    this.field = fault.field;
    this.rule = fault.rule;
    brandError(this, "tool_definition");
  }
}

/**
 * A call's input that fails its tool (an unknown tool, arguments that fail the schema, the text
 * rules or an identity canonicaliser). The message is `<operation>: <field> <rule>`, e.g.
 * `keyFor: args.amount must be a finite decimal number`.
 */
export class InvalidArgumentsError extends TypeError implements FieldFault {
  override readonly name = "InvalidArgumentsError";
  readonly tool: string;
  readonly field: string;
  readonly rule: string;
  /** @param operation the operation refusing the input, the message's prefix (e.g. `keyFor`). */
  constructor(operation: string, fault: FieldFault) {
    super(`${operation}: ${fault.field} ${fault.rule}`);
    this.tool = fault.tool;
    this.field = fault.field;
    this.rule = fault.rule;
    brandError(this, "invalid_arguments");
  }
}

/** True when `e` is a {@link ToolDefinitionError} (from any copy of this package). */
export const isToolDefinitionError = (e: unknown): e is ToolDefinitionError => errorKindOf(e) === "tool_definition";
/** True when `e` is an {@link InvalidArgumentsError} (from any copy of this package). */
export const isInvalidArgumentsError = (e: unknown): e is InvalidArgumentsError =>
  errorKindOf(e) === "invalid_arguments";
