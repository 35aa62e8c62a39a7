import { z } from "zod";

/**
 * Invalid input to a dashboard query (a field out of range, a malformed cursor). `field` names the
 * input field at fault, e.g. `toEpochMs` or `filters.status`, so a service can answer 400 naming it.
 */
export class QueryInputError extends Error {
  override readonly name = "QueryInputError";
  /** The input field at fault (dotted path). */
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.field = field;
  }
}

/** An epoch-ms instant: an integer from 1970 up to year 275760 (the limit of a JS Date). */
export const epochMsSchema = z.number().int("must be an integer (epoch milliseconds)").min(0).max(8.64e15);

/**
 * Parses `input` with `schema`.
 * @throws QueryInputError naming the first invalid field.
 */
export function parseQueryInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.length ? issue.path.join(".") : "input";
  throw new QueryInputError(field, issue?.message ?? "invalid");
}
