/**
 * The JSON format of a declarative HTTP tool as zod schemas, and the TypeScript types derived from
 * them (`z.input`), so the format is written once. Cross-field rules (URL placeholders naming
 * arguments, identity fields being required arguments, …) are checked in `validate.ts`.
 */
import { type Canonicaliser, canon, TOOL_KINDS } from "@tristate/core";
import { z } from "zod";

/** Argument field names: identifiers. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A dot path into a JSON value: non-empty segments separated by single dots (`data.items`, `0.state`). */
const DOT_PATH = /^[^.]+(\.[^.]+)*$/;

/** The types an argument field may have. */
const ARG_TYPES = ["string", "number", "integer", "boolean"] as const;
/** The HTTP methods a declarative tool may use. */
const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
type HttpMethod = (typeof HTTP_METHODS)[number];

const fieldName = z.string().regex(FIELD_NAME, "must be an identifier (letters, digits, _)");
const argType = z.enum(ARG_TYPES);
const scalar = z.union([z.string(), z.number(), z.boolean()]);
const dotPath = z.string().regex(DOT_PATH, "must be a dot path such as results or data.0.state");
const headerName = z.string().regex(HEADER_NAME, "must be an HTTP header name");

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
export type HttpToolArg = z.input<typeof propertySchema>;

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

const httpStatus = z.number().int().min(100).max(599);

/** How to read "found" from a probe's answer. */
const foundSchema = z.discriminatedUnion("type", [
  /** The answer (or the array at `path`) is a JSON array: non-empty → found (its first element), empty → absent. */
  z.object({ type: z.literal("non_empty_array"), path: z.string().min(1).optional() }).strict(),
  /** The HTTP status tells: `found` statuses → found (the body), `absent` statuses → absent, others → no evidence. */
  z
    .object({
      type: z.literal("status"),
      found: z.array(httpStatus).min(1),
      absent: z.array(httpStatus).min(1),
    })
    .strict(),
  /**
   * The value at `path` in the JSON answer: one of `values` → found (the body); else absent, or — when
   * `absentValues` is given — absent only for those values and no evidence for any other.
   */
  z
    .object({
      type: z.literal("json_path_equals"),
      path: z.string().min(1),
      values: z.array(scalar.nullable()).min(1),
      absentValues: z.array(scalar.nullable()).min(1).optional(),
    })
    .strict(),
]);

/** How to read "found" from a probe's answer (`non_empty_array`, `status` or `json_path_equals`). */
export type FoundRule = z.infer<typeof foundSchema>;

const probeSchema = z.object({ url: z.string().min(1), found: foundSchema }).strict();

const EXPECTED_RULE = "must be a string, number, boolean or null, or a non-empty list of them";
/** One value, or a non-empty list of values, a JSON value is compared with (`===`; null matches a missing value). */
const expected = z.union([scalar.nullable(), z.array(scalar.nullable()).min(1, EXPECTED_RULE)], {
  error: EXPECTED_RULE,
});

/** A test of the items of an array in the answer. */
const itemsTest = z
  .object({
    /** Dot path of the array in the JSON answer; absent: the answer itself is the array. */
    path: dotPath.optional(),
    /** Dot path of the value inside each item, e.g. `status` or `result.code`. */
    field: dotPath,
    /** What that value must equal. */
    equals: expected,
  })
  .strict();

const STATUS_RULE = "must be a 2xx status or a non-empty list of them (other statuses never reach the answers rules)";
/** The 2xx statuses an answer rule may name (others are classified before the rules are read). */
const successStatus = z.number().int(STATUS_RULE).min(200, STATUS_RULE).max(299, STATUS_RULE);

/**
 * One rule for reading a successful-looking (2xx) answer: every condition given must hold; the first
 * rule that matches says what the answer means.
 */
const answerRuleSchema = z
  .object({
    /** The answer's status, or one of these (2xx only). Absent: any 2xx. */
    status: z.union([successStatus, z.array(successStatus).min(1, STATUS_RULE)], { error: STATUS_RULE }).optional(),
    /** Dot path of a value in the JSON answer; with `equals`. */
    path: dotPath.optional(),
    /** What the value at `path` must equal (one of, if a list); with `path`. */
    equals: expected.optional(),
    /** The array holds at least one item and every item's `field` equals `equals`. */
    every: itemsTest.optional(),
    /** The array holds at least one item whose `field` equals `equals`. */
    some: itemsTest.optional(),
    /**
     * What a matching answer means: `no_effect` (the remote did nothing: FAILED_NO_EFFECT, code
     * `REJECTED`), `partial` (part of it took effect: UNKNOWN, code `PARTIAL_EFFECT`), or `done` (the
     * whole effect happened; for a 207 whose every part succeeded — needs a body test).
     */
    means: z.enum(["done", "no_effect", "partial"]),
  })
  .strict()
  .superRefine((rule, ctx) => {
    if (rule.path !== undefined && rule.equals === undefined) {
      ctx.addIssue({ code: "custom", path: ["equals"], message: "is required with path" });
    }
    if (rule.equals !== undefined && rule.path === undefined) {
      ctx.addIssue({ code: "custom", path: ["path"], message: "is required with equals" });
    }
    if (rule.status === undefined && rule.path === undefined && !rule.every && !rule.some) {
      ctx.addIssue({ code: "custom", message: "must test something: status, path with equals, every or some" });
    }
    if (rule.means === "no_effect" && rule.path === undefined && !rule.every) {
      ctx.addIssue({
        code: "custom",
        path: ["means"],
        message:
          '"no_effect" needs a body test (path with equals, or every): a status alone cannot show that no part took effect',
      });
    }
    if (rule.means === "no_effect" && rule.some) {
      ctx.addIssue({
        code: "custom",
        path: ["some"],
        message: 'cannot mean "no_effect": some failed items say nothing of the others (use every, or means "partial")',
      });
    }
    if (rule.means === "done" && rule.path === undefined && !rule.every) {
      ctx.addIssue({
        code: "custom",
        path: ["means"],
        message:
          '"done" needs a body test (path with equals, or every): a status alone cannot show every part succeeded',
      });
    }
  });

/** One rule for reading a 2xx answer; see {@link answerRuleSchema}. */
export type AnswerRule = z.infer<typeof answerRuleSchema>;

/**
 * The declaration of one HTTP tool. URL templates take `{field}` placeholders from the arguments
 * (URL-encoded); `{key}` is the idempotency key (main URL and key probe); `{since}` is the intent's
 * creation time in epoch ms (identity probe). The arguments are checked by `parseArgs` (validate.ts),
 * which names the offending field more precisely than a union could.
 */
export const declarationSchema = z
  .object({
    /** Unique tool name (letters, digits, `_`, `.`, `-`; at most 128). */
    name: z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, "must match /^[A-Za-z0-9_.-]{1,128}$/"),
    description: z.string().optional(),
    kind: z.enum(TOOL_KINDS),
    /** The HTTP method, in either case (sent upper-cased). */
    method: z.preprocess(
      (v: HttpMethod | Lowercase<HttpMethod>) => (typeof v === "string" ? v.toUpperCase() : v),
      z.enum(HTTP_METHODS),
    ),
    /** Absolute http(s) URL template, e.g. `https://pay.example/refunds` or `…/orders/{order_id}/refund`. */
    url: z.string().min(1),
    /** A JSON Schema object of string/number/integer/boolean properties, or a list of fields. */
    args: z.custom<ArgsInput>(),
    /** Identity fields and their canonicalisers: `upper`, `lower`, `trim`, `exact`, `decimal:<places>`. */
    identity: z.record(z.string(), canonicaliserName).default({}),
    /** Header carrying the key; default `Idempotency-Key`; null sends none. */
    idempotencyHeader: headerName.nullable().optional(),
    /** `args` (default): the arguments as the JSON body (not for GET); `none`: no body. */
    body: z.enum(["args", "none"]).default("args"),
    /** Also put the idempotency key into the body under this field (a client reference a probe can find). */
    clientRefField: fieldName.optional(),
    /** Static request headers (also sent with probes). */
    headers: z.record(headerName, z.string()).optional(),
    /** Timeout of one call, ms (at most one hour). */
    timeoutMs: z.number().int().positive().max(3_600_000),
    /** How long the remote remembers keys, ms (default 24 h). */
    keyRetentionMs: z.number().int().positive().optional(),
    /** Key probe: a GET URL template with `{key}` (and `{field}`s), and how to read "found". */
    keyProbe: probeSchema.optional(),
    /** Identity probe: a GET URL template with `{since}` (and `{field}`s), and how to read "found". */
    identityProbe: probeSchema.optional(),
    /** The compensating tool and its arguments: values may be `{args.<field>}`, `{result.<path>}` or literals. */
    compensation: z
      .object({ tool: z.string().min(1), args: z.record(fieldName, scalar.nullable()).default({}) })
      .strict()
      .optional(),
    irreversible: z.boolean().optional(),
    /**
     * Settle window, ms: how long after a send the remote may still apply the effect or keep it
     * hidden from its lookups. Probes' "absent" is proof only after it; an `unsafe` tool is resent on
     * absence only when it declares one (DESIGN.md rule 5b).
     */
    settleMs: z.number().int().nonnegative().max(86_400_000).optional(),
    /**
     * Whether conclusive absent probes justify a resend with the same key (default: true for
     * idempotent_by_key and for unsafe tools with `settleMs`; an unsafe tool needs `settleMs` for it).
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
    /** Statuses (4xx/5xx) the remote documents as "refused before work" (FAILED_NO_EFFECT). */
    noEffectStatuses: z.array(z.number().int().min(400).max(599)).optional(),
    /**
     * How to read 2xx answers, first match wins: which mean "no effect", "partial" or (for a 207)
     * "done". A 207 that no rule matches is a partial effect; any other unmatched 2xx is done.
     */
    answers: z.array(answerRuleSchema).optional(),
    /** Effect phrase template, e.g. `refund of {amount} on order {order_id}`. */
    describe: z.string().optional(),
  })
  .strict();

/**
 * A declarative HTTP tool (the JSON format of `httpTools` and of `.json` catalog files), as written;
 * see {@link declarationSchema} for each field.
 */
export type HttpToolDeclaration = z.input<typeof declarationSchema>;

/** A declaration after the schema: defaults filled, method upper-cased (arguments still raw). */
export type ParsedDeclaration = z.output<typeof declarationSchema>;
