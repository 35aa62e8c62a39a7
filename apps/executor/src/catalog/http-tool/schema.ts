/**
 * The JSON format of a declarative HTTP tool as zod schemas, and the TypeScript types derived from
 * them (`z.input`), so the format is written once: the base fields every declarative tool shares
 * (`../declaration/schema.ts`) and the request's own. Cross-field rules (URL placeholders naming
 * arguments, identity fields being required arguments, …) are checked in `validate.ts`.
 */
import { z } from "zod";
import { declarationShape, fieldName, probeStateSchema, type ToolArg } from "../declaration/schema.ts";

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A dot path into a JSON value: non-empty segments separated by single dots (`data.items`, `0.state`). */
const DOT_PATH = /^[^.]+(\.[^.]+)*$/;

/** The HTTP methods a declarative tool may use. */
const HTTP_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
type HttpMethod = (typeof HTTP_METHODS)[number];

const scalar = z.union([z.string(), z.number(), z.boolean()]);
const dotPath = z.string().regex(DOT_PATH, "must be a dot path such as results or data.0.state");
const headerName = z.string().regex(HEADER_NAME, "must be an HTTP header name");

export { canonicaliserFor } from "../declaration/schema.ts";

/** What a declaration may say about one argument field (JSON Schema keywords, lengths in characters). */
export type HttpToolArg = ToolArg;

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

/**
 * A probe: a GET of `url`, read with `found` (found or absent), and what the found item's `state`
 * means (done, failed, in progress; `"always_done"`; without it a find proves delivery only).
 */
const probeSchema = z
  .object({ url: z.string().min(1), found: foundSchema, state: probeStateSchema.optional() })
  .strict();

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
 * The declaration of one HTTP tool: the base fields every declarative tool has (see
 * `baseDeclarationSchema`) and the request's. URL templates take `{field}` placeholders from the
 * arguments (URL-encoded); `{key}` is the idempotency key (main URL and key probe); `{since}` is the
 * intent's creation time in epoch ms (identity probe).
 */
export const declarationSchema = z
  .object(
    declarationShape(
      {
        /** The HTTP method, in either case (sent upper-cased). */
        method: z.preprocess(
          (v: HttpMethod | Lowercase<HttpMethod>) => (typeof v === "string" ? v.toUpperCase() : v),
          z.enum(HTTP_METHODS),
        ),
        /** Absolute http(s) URL template, e.g. `https://pay.example/refunds` or `…/orders/{order_id}/refund`. */
        url: z.string().min(1),
        /** Header carrying the key; default `Idempotency-Key`; null sends none. */
        idempotencyHeader: headerName.nullable().optional(),
        /** `args` (default): the arguments as the JSON body (not for GET); `none`: no body. */
        body: z.enum(["args", "none"]).default("args"),
        /** Also put the idempotency key into the body under this field (a client reference a probe can find). */
        clientRefField: fieldName.optional(),
        /** Static request headers (also sent with probes). */
        headers: z.record(headerName, z.string()).optional(),
        /** Key probe: a GET URL template with `{key}` (and `{field}`s), how to read "found" and the found item's `state`. */
        keyProbe: probeSchema.optional(),
        /** Identity probe: a GET URL template with `{since}` (and `{field}`s), how to read "found" and the found item's `state`. */
        identityProbe: probeSchema.optional(),
        /** The compensating tool and its arguments: values may be `{args.<field>}`, `{result.<path>}` or literals. */
        compensation: z
          .object({ tool: z.string().min(1), args: z.record(fieldName, scalar.nullable()).default({}) })
          .strict()
          .optional(),
        /** Statuses (4xx/5xx) the remote documents as "refused before work" (FAILED_NO_EFFECT). */
        noEffectStatuses: z.array(z.number().int().min(400).max(599)).optional(),
        /**
         * How to read 2xx answers, first match wins: which mean "no effect", "partial" or (for a 207)
         * "done". A 207 that no rule matches is a partial effect; any other unmatched 2xx is done.
         */
        answers: z.array(answerRuleSchema).optional(),
      },
      // The order the fields were always checked in (the first invalid one is reported).
      [
        "name",
        "description",
        "kind",
        "method",
        "url",
        "args",
        "identity",
        "idempotencyHeader",
        "body",
        "clientRefField",
        "headers",
        "timeoutMs",
        "keyRetentionMs",
        "keyProbe",
        "identityProbe",
        "compensation",
        "irreversible",
        "settleMs",
        "resendWhenAbsent",
        "loggableFields",
        "secretFields",
        "noEffectStatuses",
        "answers",
        "describe",
      ],
    ),
  )
  .strict();

/**
 * A declarative HTTP tool (the JSON format of `httpTools` and of `.json` catalog files), as written;
 * see {@link declarationSchema} for each field.
 */
export type HttpToolDeclaration = z.input<typeof declarationSchema>;

/** A declaration after the schema: defaults filled, method upper-cased (arguments still raw). */
export type ParsedDeclaration = z.output<typeof declarationSchema>;
