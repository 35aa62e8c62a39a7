/**
 * What every declarative tool (an HTTP tool, an upstream MCP tool) declares, written once: the
 * argument fields (a JSON Schema subset or a list of fields), the canonicalisers, and the base
 * schema of the fields both formats share (name, kind, arguments, identity, timeouts, settle
 * window, loggable and secret fields, effect phrase) with their docs. Each format adds its own
 * fields with {@link declarationShape}; the cross-field checks they share are in `validate.ts`.
 */
import { type Canonicaliser, canon, TOOL_KINDS } from "@tristate/core";
import { z } from "zod";

/** Argument field names: identifiers. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The types an argument field may have. */
const ARG_TYPES = ["string", "number", "integer", "boolean"] as const;

/** An argument field's name (an identifier: letters, digits, `_`). */
export const fieldName = z.string().regex(FIELD_NAME, "must be an identifier (letters, digits, _)");
/** A tool name: 1–128 of letters, digits, `_`, `.`, `-` (`defineTool`'s rule, and the MCP SDK's). */
export const toolName = z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, "must match /^[A-Za-z0-9_.-]{1,128}$/");
const argType = z.enum(ARG_TYPES);
const scalar = z.union([z.string(), z.number(), z.boolean()]);

const propertyRules = {
  type: z.union([argType, z.array(argType).min(1)], {
    error: 'must be "string", "number", "integer" or "boolean", or a list of them',
  }),
  description: z.string().optional(),
  enum: z.array(scalar).min(1).optional(),
  minLength: z.number().int().min(0).optional(),
  maxLength: z.number().int().min(0).optional(),
  pattern: z
    .string()
    .refine(
      (p) => {
        try {
          new RegExp(p, "u");
          return true;
        } catch {
          return false;
        }
      },
      { message: "must be a valid regular expression" },
    )
    .optional(),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  /** JSON Schema's `multipleOf` for numbers, e.g. 0.01 for money with two decimals (checked float-safe by zod). */
  multipleOf: z.number().positive("must be greater than 0").optional(),
};

/** One argument field in JSON Schema form. */
export const propertySchema = z.object(propertyRules).strict();

/** The arguments as a JSON Schema subset: an object of string/number/integer/boolean properties. */
export const objectArgsSchema = z
  .object({
    type: z.literal("object"),
    properties: z.record(fieldName, propertySchema),
    required: z.array(z.string()).default([]),
    additionalProperties: z.boolean().optional(),
  })
  .strict();

/** The arguments as a list of fields (`required` defaults to true). */
export const fieldListSchema = z.array(
  z.object({ name: fieldName, required: z.boolean().default(true), ...propertyRules }).strict(),
);

/** What a declaration may say about one argument field (JSON Schema keywords, lengths in characters). */
export type ToolArg = z.input<typeof propertySchema>;

/** Either form of the declared arguments, as written in the declaration. */
type ArgsInput = z.input<typeof objectArgsSchema> | z.input<typeof fieldListSchema>;

/**
 * The canonicaliser a declaration names: `upper`, `lower`, `trim`, `exact` or `decimal:<places 0–20>`.
 * @returns the canonicaliser, or null for an unknown name.
 */
export function canonicaliserFor(name: string): Canonicaliser | null {
  switch (name) {
    case "upper":
      return canon.upper;
    case "lower":
      return canon.lower;
    case "trim":
      return canon.trim;
    case "exact":
      return canon.exact;
  }
  const m = /^decimal:(\d{1,2})$/.exec(name);
  if (m && Number(m[1]) <= 20) return canon.decimal(Number(m[1]));
  return null;
}

const canonicaliserName = z.string().superRefine((value, ctx) => {
  if (!canonicaliserFor(value)) {
    ctx.addIssue({
      code: "custom",
      message: `unknown canonicaliser ${JSON.stringify(value)} (use upper, lower, trim, exact or decimal:<places 0-20>)`,
    });
  }
});

/**
 * The fields every declarative tool has, the same in each format (see `defineTool`'s `ToolSpec`
 * for what the executor does with them).
 */
const baseDeclarationSchema = z
  .object({
    /**
     * Unique tool name (letters, digits, `_`, `.`, `-`; at most 128): the catalog's name for it, the
     * name agents call it by (and, for an MCP tool, the MCP tool name Tristate exposes).
     */
    name: toolName,
    /** What the tool does, for a model's tool list. */
    description: z.string().optional(),
    /**
     * `read_only` (no effect, no record), `idempotent_by_key` (the remote dedupes by the key) or
     * `unsafe` (no key support: resent on absence only with `settleMs`).
     */
    kind: z.enum(TOOL_KINDS),
    /**
     * The arguments: a JSON Schema object of string/number/integer/boolean properties, or a list of
     * fields (checked by `parseArgs`, which names the offending field more precisely than a union).
     */
    args: z.custom<ArgsInput>(),
    /**
     * Identity fields (required arguments) and their canonicalisers: `upper`, `lower`, `trim`,
     * `exact`, `decimal:<places 0-20>`. Only they feed the idempotency key; at least one is required
     * unless `kind` is `read_only`.
     */
    identity: z.record(z.string(), canonicaliserName).default({}),
    /** Timeout of one call, ms (at most one hour). */
    timeoutMs: z.number().int().positive().max(3_600_000),
    /** How long the remote remembers idempotency keys, ms (default 24 h). */
    keyRetentionMs: z.number().int().positive().optional(),
    /** True for effects that cannot be undone (a sent email): never compensated. */
    irreversible: z.boolean().optional(),
    /**
     * Settle window, ms (at most 24 h): how long after a send the remote may still apply the effect
     * or keep it hidden from its lookups. Probes' "absent" is proof only after it; an `unsafe` tool
     * is resent on absence only when it declares one (DESIGN.md rule 5b; `settleMs` of `defineTool`).
     */
    settleMs: z.number().int().nonnegative().max(86_400_000).optional(),
    /**
     * Whether conclusive absent probes justify a resend with the same key (default: true for
     * `idempotent_by_key` and for `unsafe` tools with `settleMs`; an `unsafe` tool needs `settleMs` for it).
     */
    resendWhenAbsent: z.boolean().optional(),
    /**
     * Argument fields whose values may appear on spans, in logs and in error messages. Values of the
     * other fields are replaced by `{field}` in every error the tool throws.
     */
    loggableFields: z.array(z.string()).optional(),
    /**
     * Argument fields holding secrets (e.g. a card number): the read API masks their values for every
     * role but admin (`***` and the last 4 characters of a value of 12 or more, else `***`), and they
     * are redacted from every stored message whatever their length. A secret field is never loggable.
     */
    secretFields: z.array(z.string()).optional(),
    /** Effect phrase template naming argument fields, e.g. `refund of {amount} on order {order_id}`. */
    describe: z.string().optional(),
  })
  .strict();

const STATE_VALUES_RULE = "must be a non-empty list of strings, numbers or booleans";
const stateValues = z.array(scalar, { error: STATE_VALUES_RULE }).min(1, STATE_VALUES_RULE);

/**
 * What the state of an item a probe found means (DESIGN.md rule 5a: an item found proves the
 * request was delivered, not that the effect happened). Either `"always_done"` — the remote keeps
 * no declined, failed or unfinished items, so an item found is the effect — or the item's field
 * (a dot path inside the item, e.g. Stripe's Charge `status`) and which of its values mean `done`
 * (→ SUCCEEDED `found`), `failed` (the request was processed and did nothing → FAILED_NO_EFFECT
 * with the item as evidence; a key probe's find only) and `pending` (still in progress → SUCCEEDED
 * `found`, as rule 5a says). Any other value, and every find of a probe without `state`, proves
 * nothing about the effect: the executor reads back the remote's stored answer with a same-key resend
 * where the remote dedupes the key, else the record waits for a person (`FOUND_STATE_UNKNOWN`).
 * A value belongs to one list only.
 */
export const probeStateSchema = z.union(
  [
    z.literal("always_done"),
    z
      .object({
        /** Dot path of the state inside the item found, e.g. `status` or `outcome.type`. */
        field: z.string().regex(/^[^.]+(\.[^.]+)*$/, "must be a dot path such as status or outcome.type"),
        /** Values meaning the effect happened. */
        done: stateValues,
        /** Values meaning the request was processed and did nothing (declined, failed, canceled before work). */
        failed: stateValues.optional(),
        /** Values meaning the effect is under way (rule 5a counts it as delivered and happening). */
        pending: stateValues.optional(),
      })
      .strict()
      .superRefine((state, ctx) => {
        const seen = new Map<unknown, string>();
        for (const list of ["done", "failed", "pending"] as const) {
          for (const [i, value] of (state[list] ?? []).entries()) {
            const other = seen.get(value);
            if (other !== undefined) {
              ctx.addIssue({
                code: "custom",
                path: [list, i],
                message: `${JSON.stringify(value)} is also in ${other}: a state has one meaning`,
              });
            }
            seen.set(value, list);
          }
        }
      }),
  ],
  { error: 'must be "always_done" or { field, done, failed?, pending? }' },
);

/** What a probe's `state` says; see {@link probeStateSchema}. */
export type ProbeState = z.infer<typeof probeStateSchema>;

/** The fields every declaration has, after the schema (defaults filled, arguments still raw: `parseArgs` reads them). */
export type BaseDeclaration = Omit<z.output<typeof baseDeclarationSchema>, "args"> & { args: unknown };

type BaseShape = typeof baseDeclarationSchema.shape;

/**
 * A format's declaration shape: the base fields and its own, in `order`. zod reports the first
 * invalid field in the shape's order, so each format keeps the order its error messages have always
 * followed. A field of `own` with a base field's name replaces it.
 * @param order every field of the base and of `own`, each once.
 * @throws Error when `order` misses or repeats a field (a programming error, at import time).
 */
export function declarationShape<S extends z.ZodRawShape>(
  own: S,
  order: readonly (keyof BaseShape | keyof S)[],
): Omit<BaseShape, keyof S> & S {
  const all: Record<string, unknown> = { ...baseDeclarationSchema.shape, ...own };
  const names = new Set(order.map(String));
  if (names.size !== order.length || names.size !== Object.keys(all).length || ![...names].every((n) => n in all)) {
    throw new Error(`declarationShape: order must name every field once (${Object.keys(all).join(", ")})`);
  }
  return Object.fromEntries(order.map((k) => [k, all[k as string]])) as unknown as Omit<BaseShape, keyof S> & S;
}
