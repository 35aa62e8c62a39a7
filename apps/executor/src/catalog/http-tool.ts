/**
 * Declarative HTTP tools: a JSON declaration (method, URL template, argument fields, identity fields
 * with canonicalisers, idempotency header, key and identity probes and how to read "found" from
 * their answers, timeouts, key retention, compensation) turned into a `defineTool` tool that calls
 * the remote through `callHttp`.
 */
import {
  type AnyTool,
  type Canonicaliser,
  callHttp,
  canon,
  defineTool,
  type HttpCallContext,
  isAmbiguousError,
  isRejectedError,
  type ProbeContext,
  readPath,
  TOOL_KINDS,
} from "@tristate/core";
import { type ZodType, z } from "zod";
import { CatalogError } from "./catalog-error.ts";

/** Argument field names: identifiers. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** `{name}` placeholders of a template. */
const PLACEHOLDER = /\{([^{}]*)\}/g;

const ARG_TYPES = ["string", "number", "integer", "boolean"] as const;
type ArgType = (typeof ARG_TYPES)[number];

const fieldName = z.string().regex(FIELD_NAME, "must be an identifier (letters, digits, _)");
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
};

/** One argument field in JSON Schema form. */
const propertySchema = z.object(propertyRules).strict();

/** The arguments as a JSON Schema subset: an object of string/number/integer/boolean properties. */
const objectArgsSchema = z
  .object({
    type: z.literal("object"),
    properties: z.record(fieldName, propertySchema),
    required: z.array(z.string()).default([]),
    additionalProperties: z.boolean().optional(),
  })
  .strict();

/** The arguments as a list of fields (`required` defaults to true). */
const fieldListSchema = z.array(
  z.object({ name: fieldName, required: z.boolean().default(true), ...propertyRules }).strict(),
);

/** The canonicalisers a declaration may name: `upper`, `lower`, `trim`, `exact`, `decimal:<places 0–20>`. */
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

/** How to read "found" from a probe's answer. */
const foundSchema = z.discriminatedUnion("type", [
  /** The answer (or the array at `path`) is a JSON array: non-empty → found (its first element), empty → absent. */
  z.object({ type: z.literal("non_empty_array"), path: z.string().min(1).optional() }).strict(),
  /** The HTTP status tells: `found` statuses → found (the body), `absent` statuses → absent, others → no evidence. */
  z
    .object({
      type: z.literal("status"),
      found: z.array(z.number().int().min(100).max(599)).min(1),
      absent: z.array(z.number().int().min(100).max(599)).min(1),
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

const probeSchema = z.object({ url: z.string().min(1), found: foundSchema }).strict();

/** The declaration of one HTTP tool, as validated (arguments still raw; see {@link parseArgs}). */
const declarationSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, "must match /^[A-Za-z0-9_.-]{1,128}$/"),
    description: z.string().optional(),
    kind: z.enum(TOOL_KINDS),
    method: z.preprocess(
      (v) => (typeof v === "string" ? v.toUpperCase() : v),
      z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]),
    ),
    url: z.string().min(1),
    args: z.unknown(),
    identity: z.record(z.string(), canonicaliserName).default({}),
    idempotencyHeader: z.string().regex(HEADER_NAME, "must be an HTTP header name").nullable().optional(),
    body: z.enum(["args", "none"]).default("args"),
    clientRefField: fieldName.optional(),
    headers: z.record(z.string().regex(HEADER_NAME, "must be an HTTP header name"), z.string()).optional(),
    timeoutMs: z.number().int().positive().max(3_600_000),
    keyRetentionMs: z.number().int().positive().optional(),
    keyProbe: probeSchema.optional(),
    identityProbe: probeSchema.optional(),
    compensation: z
      .object({ tool: z.string().min(1), args: z.record(fieldName, scalar.nullable()).default({}) })
      .strict()
      .optional(),
    irreversible: z.boolean().optional(),
    resendWhenAbsent: z.boolean().optional(),
    loggableFields: z.array(z.string()).optional(),
    noEffectStatuses: z.array(z.number().int().min(400).max(599)).optional(),
    describe: z.string().optional(),
  })
  .strict();

/** What a declaration may say about one argument field. */
export interface HttpToolArg {
  type: ArgType | ArgType[];
  description?: string;
  enum?: (string | number | boolean)[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
}

/** How to read "found" from a probe's answer. */
export type FoundRule = z.infer<typeof foundSchema>;

/**
 * A declarative HTTP tool (the JSON format of `httpTools` and of `.json` catalog files). URL templates
 * take `{field}` placeholders from the arguments (URL-encoded); `{key}` is the idempotency key (main
 * URL and key probe); `{since}` is the intent's creation time in epoch ms (identity probe).
 */
export interface HttpToolDeclaration {
  /** Unique tool name. */
  name: string;
  description?: string;
  kind: "read_only" | "idempotent_by_key" | "unsafe";
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | Lowercase<"GET" | "POST" | "PUT" | "PATCH" | "DELETE">;
  /** Absolute http(s) URL template, e.g. `https://pay.example/refunds` or `…/orders/{order_id}/refund`. */
  url: string;
  /** A JSON Schema object of string/number/integer/boolean properties, or a list of fields. */
  args:
    | { type: "object"; properties: Record<string, HttpToolArg>; required?: string[]; additionalProperties?: boolean }
    | (HttpToolArg & { name: string; required?: boolean })[];
  /** Identity fields and their canonicalisers: `upper`, `lower`, `trim`, `exact`, `decimal:<places>`. */
  identity?: Record<string, string>;
  /** Header carrying the key; default `Idempotency-Key`; null sends none. */
  idempotencyHeader?: string | null;
  /** `args` (default): the arguments as the JSON body (not for GET); `none`: no body. */
  body?: "args" | "none";
  /** Also put the idempotency key into the body under this field (a client reference a probe can find). */
  clientRefField?: string;
  /** Static request headers (also sent with probes). */
  headers?: Record<string, string>;
  /** Timeout of one call, ms. */
  timeoutMs: number;
  /** How long the remote remembers keys, ms (default 24 h). */
  keyRetentionMs?: number;
  /** Key probe: a GET URL template with `{key}` (and `{field}`s), and how to read "found". */
  keyProbe?: { url: string; found: FoundRule };
  /** Identity probe: a GET URL template with `{since}` (and `{field}`s), and how to read "found". */
  identityProbe?: { url: string; found: FoundRule };
  /** The compensating tool and its arguments: values may be `{args.<field>}`, `{result.<path>}` or literals. */
  compensation?: { tool: string; args?: Record<string, string | number | boolean | null> };
  irreversible?: boolean;
  /** Whether absent probes justify a resend with the same key (default: true for idempotent_by_key). */
  resendWhenAbsent?: boolean;
  /** Argument fields whose values may appear on spans and in logs. */
  loggableFields?: string[];
  /** Statuses the remote documents as "refused before work" (FAILED_NO_EFFECT). */
  noEffectStatuses?: number[];
  /** Effect phrase template, e.g. `refund of {amount} on order {order_id}`. */
  describe?: string;
}

type Parsed = z.infer<typeof declarationSchema>;
type Property = z.infer<typeof propertySchema> & { required: boolean };

/** Formats a zod issue as `field: rule`, with "is required" for missing values and "unknown field" for extra keys. */
function issueParts(issue: z.core.$ZodIssue, raw: unknown, prefix: (string | number)[] = []): [string, string] {
  const path = [...prefix, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))];
  if (issue.code === "unrecognized_keys") {
    return [[...path, issue.keys[0] ?? ""].join("."), "unknown field"];
  }
  if (issue.code === "invalid_type" && path.length > 0 && valueAt(raw, path) === undefined) {
    return [path.join("."), "is required"];
  }
  return [path.join(".") || "(declaration)", issue.message];
}

function valueAt(raw: unknown, path: (string | number)[]): unknown {
  let cur = raw;
  for (const p of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string | number, unknown>)[p];
  }
  return cur;
}

/** Declared argument fields; `strict` refuses undeclared ones (`additionalProperties: false`). */
interface Args {
  fields: Map<string, Property>;
  strict: boolean;
}

/** The declared argument fields, from either form. @throws CatalogError naming `args.<…>`. */
function parseArgs(tool: string, raw: unknown): Args {
  if (raw === undefined) throw new CatalogError(tool, "args", "is required");
  const out = new Map<string, Property>();
  if (Array.isArray(raw)) {
    const parsed = fieldListSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new CatalogError(tool, ...issueParts(issue, raw, ["args"]));
    }
    for (const [i, f] of parsed.data.entries()) {
      if (out.has(f.name)) throw new CatalogError(tool, `args.${i}.name`, `field "${f.name}" is declared twice`);
      const { name, ...rest } = f;
      out.set(name, rest);
    }
    return { fields: out, strict: false };
  }
  const parsed = objectArgsSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CatalogError(tool, ...issueParts(issue, raw, ["args"]));
  }
  for (const [i, r] of parsed.data.required.entries()) {
    if (!(r in parsed.data.properties)) throw new CatalogError(tool, `args.required.${i}`, `"${r}" is not a property`);
  }
  for (const [name, p] of Object.entries(parsed.data.properties)) {
    out.set(name, { ...p, required: parsed.data.required.includes(name) });
  }
  return { fields: out, strict: parsed.data.additionalProperties === false };
}

function placeholders(template: string): string[] {
  return [...template.matchAll(PLACEHOLDER)].map((m) => m[1] ?? "");
}

/** Checks a URL template: known placeholders only, absolute http(s) once filled in. */
function checkUrl(
  tool: string,
  field: string,
  template: string,
  args: Args,
  specials: string[],
  mustHave?: string,
): void {
  const names = placeholders(template);
  for (const name of names) {
    if (specials.includes(name)) continue;
    const arg = args.fields.get(name);
    if (!arg) {
      const allowed = [...args.fields.keys(), ...specials].map((k) => `{${k}}`);
      throw new CatalogError(tool, field, `{${name}} is not an argument field (allowed: ${allowed.join(", ")})`);
    }
    if (!arg.required) throw new CatalogError(tool, field, `{${name}} names an optional argument; it must be required`);
  }
  if (mustHave && !names.includes(mustHave)) throw new CatalogError(tool, field, `must contain {${mustHave}}`);
  let url: URL | null = null;
  try {
    url = new URL(template.replace(PLACEHOLDER, "x"));
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new CatalogError(tool, field, `must be an absolute http(s) URL template, got ${JSON.stringify(template)}`);
  }
}

/**
 * Validates one declaration.
 * @param index its position, to name a tool without a valid name.
 * @throws CatalogError naming the tool and the field.
 */
export function parseHttpToolDeclaration(raw: unknown, index: number): HttpToolDeclaration {
  const rawName = (raw as { name?: unknown } | null)?.name;
  const label = typeof rawName === "string" && rawName !== "" ? rawName : `#${index}`;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new CatalogError(label, null, "an HTTP tool declaration must be an object");
  }
  const parsed = declarationSchema.safeParse(raw);
  if (!parsed.success) {
    throw new CatalogError(label, ...issueParts(parsed.error.issues[0]!, raw));
  }
  const d: Parsed = parsed.data;
  const args = parseArgs(d.name, d.args);
  const isArg = (f: string) => args.fields.has(f);

  const identity = Object.keys(d.identity);
  if (d.kind !== "read_only" && identity.length === 0) {
    throw new CatalogError(d.name, "identity", "must declare at least one field for a side-effecting tool");
  }
  for (const field of identity) {
    if (!isArg(field)) throw new CatalogError(d.name, `identity.${field}`, "is not an argument field");
    if (!args.fields.get(field)?.required)
      throw new CatalogError(d.name, `identity.${field}`, "must be a required argument");
  }
  checkUrl(d.name, "url", d.url, args, ["key"]);
  if (d.keyProbe) checkUrl(d.name, "keyProbe.url", d.keyProbe.url, args, ["key"], "key");
  if (d.identityProbe) checkUrl(d.name, "identityProbe.url", d.identityProbe.url, args, ["since"], "since");
  for (const [i, f] of (d.loggableFields ?? []).entries()) {
    if (!isArg(f)) throw new CatalogError(d.name, `loggableFields.${i}`, `"${f}" is not an argument field`);
  }
  if (d.clientRefField && isArg(d.clientRefField)) {
    throw new CatalogError(d.name, "clientRefField", `"${d.clientRefField}" is already an argument field`);
  }
  if (d.describe) {
    for (const name of placeholders(d.describe)) {
      if (!isArg(name)) throw new CatalogError(d.name, "describe", `{${name}} is not an argument field`);
    }
  }
  for (const [field, value] of Object.entries(d.compensation?.args ?? {})) {
    if (typeof value !== "string") continue;
    for (const ref of placeholders(value)) {
      const [scope, ...rest] = ref.split(".");
      const path = rest.join(".");
      if (scope === "args" && path && isArg(rest[0] ?? "")) continue;
      if (scope === "result" && path) continue;
      throw new CatalogError(
        d.name,
        `compensation.args.${field}`,
        `{${ref}} must be {args.<argument field>} or {result.<path>}`,
      );
    }
  }
  return d as HttpToolDeclaration;
}

/** Builds the zod schema of the declared arguments (it also yields the JSON Schema of `tools.list`). */
function argsSchema(args: Args): ZodType<Record<string, unknown>> {
  const shape: Record<string, ZodType> = {};
  for (const [name, p] of args.fields) {
    const types = Array.isArray(p.type) ? p.type : [p.type];
    const variants = types.map((t): ZodType => {
      switch (t) {
        case "string": {
          let s = z.string();
          if (p.minLength !== undefined) s = s.min(p.minLength);
          if (p.maxLength !== undefined) s = s.max(p.maxLength);
          if (p.pattern !== undefined) s = s.regex(new RegExp(p.pattern, "u"));
          return s;
        }
        case "number":
        case "integer": {
          let n = t === "integer" ? z.number().int() : z.number();
          if (p.minimum !== undefined) n = n.min(p.minimum);
          if (p.maximum !== undefined) n = n.max(p.maximum);
          return n;
        }
        default:
          return z.boolean();
      }
    });
    let schema: ZodType = variants.length === 1 ? variants[0]! : z.union(variants as [ZodType, ZodType]);
    if (p.enum) {
      const allowed = p.enum;
      schema = schema.refine((v) => allowed.includes(v as string), {
        message: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(", ")}`,
      });
    }
    if (p.description) schema = schema.describe(p.description);
    shape[name] = p.required ? schema : schema.optional();
  }
  const object = z.object(shape);
  return (args.strict ? object.strict() : object) as unknown as ZodType<Record<string, unknown>>;
}

/** Fills `{name}` placeholders; `encode` URL-encodes each value. */
function fill(template: string, values: (name: string) => unknown, encode: boolean): string {
  return template.replace(PLACEHOLDER, (_, name: string) => {
    const v = values(name);
    const text = v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v);
    return encode ? encodeURIComponent(text) : text;
  });
}

/** A value of a compensation argument: a lone `{…}` keeps the value's type; mixed text is interpolated. */
function compensationValue(value: unknown, original: unknown, result: unknown): unknown {
  if (typeof value !== "string") return value;
  const lookup = (ref: string) => {
    const [scope, ...rest] = ref.split(".");
    return readPath(scope === "args" ? original : result, rest.join("."));
  };
  const lone = /^\{([^{}]*)\}$/.exec(value);
  if (lone) return lookup(lone[1] ?? "") ?? null;
  return fill(value, lookup, false);
}

/** Reads the probe's answer with its "found" rule: the evidence (non-null), null for absent. @throws for no evidence. */
function readFound(rule: FoundRule, status: number, body: unknown): unknown {
  switch (rule.type) {
    case "non_empty_array": {
      const list = rule.path ? readPath(body, rule.path) : body;
      if (!Array.isArray(list)) throw new Error(`probe answer${rule.path ? ` at ${rule.path}` : ""} is not an array`);
      return list.length > 0 ? (list[0] ?? { found: true }) : null;
    }
    case "status":
      if (rule.found.includes(status)) return body ?? { status };
      if (rule.absent.includes(status)) return null;
      throw new Error(`probe answered HTTP ${status}, neither a "found" nor an "absent" status`);
    case "json_path_equals": {
      const value = readPath(body, rule.path) ?? null;
      if (rule.values.includes(value as string)) return body ?? { [rule.path]: value };
      if (!rule.absentValues || rule.absentValues.includes(value as string)) return null;
      throw new Error(
        `probe answer has ${rule.path} = ${JSON.stringify(value)}, neither a "found" nor an "absent" value`,
      );
    }
  }
}

/** GETs a probe URL; an error status the rule names is an answer, not a failure. */
async function probeGet(
  ctx: ProbeContext,
  url: string,
  rule: FoundRule,
  headers: Record<string, string> | undefined,
): Promise<unknown> {
  try {
    const res = await callHttp(
      { signal: ctx.signal, timeoutMs: ctx.timeoutMs },
      { method: "GET", url, ...(headers ? { headers } : {}) },
    );
    return readFound(rule, res.status, res.body);
  } catch (error) {
    const status = isRejectedError(error) || isAmbiguousError(error) ? error.httpStatus : undefined;
    if (
      status !== undefined &&
      rule.type === "status" &&
      (rule.found.includes(status) || rule.absent.includes(status))
    ) {
      return readFound(rule, status, isRejectedError(error) ? error.body : undefined);
    }
    throw error;
  }
}

/**
 * Turns a declaration into a tool (validating it first).
 * @throws CatalogError naming the tool and the field when the declaration is invalid.
 */
export function httpTool(raw: HttpToolDeclaration | unknown, index = 0): AnyTool {
  const d = parseHttpToolDeclaration(raw, index);
  const parsed = declarationSchema.parse(d);
  const args = parseArgs(d.name, parsed.args);
  const header = parsed.idempotencyHeader;
  const headers = parsed.headers;
  const method = parsed.method;
  const identity = Object.fromEntries(
    Object.entries(parsed.identity).map(([f, c]) => [f, canonicaliserFor(c) as Canonicaliser]),
  );
  const keyProbe = parsed.keyProbe;
  const identityProbe = parsed.identityProbe;
  const compensation = parsed.compensation;
  const describe = parsed.describe;
  try {
    return defineTool<Record<string, unknown>, unknown>({
      name: parsed.name,
      kind: parsed.kind,
      ...(parsed.description !== undefined ? { description: parsed.description } : {}),
      args: argsSchema(args),
      identity,
      timeoutMs: parsed.timeoutMs,
      ...(parsed.keyRetentionMs !== undefined ? { keyRetentionMs: parsed.keyRetentionMs } : {}),
      ...(parsed.irreversible !== undefined ? { irreversible: parsed.irreversible } : {}),
      ...(parsed.resendWhenAbsent !== undefined ? { resendWhenAbsent: parsed.resendWhenAbsent } : {}),
      ...(parsed.loggableFields !== undefined ? { loggableFields: parsed.loggableFields } : {}),
      ...(describe ? { describe: (a: Record<string, unknown>) => fill(describe, (n) => a[n], false) } : {}),
      async invoke(a, ctx) {
        const url = fill(parsed.url, (n) => (n === "key" ? ctx.idempotencyKey : a[n]), true);
        const standardHeader = header === undefined || (header !== null && header.toLowerCase() === "idempotency-key");
        const callCtx: HttpCallContext = {
          signal: ctx.signal,
          timeoutMs: ctx.timeoutMs,
          deadline: ctx.deadline,
          ...(standardHeader ? { idempotencyKey: ctx.idempotencyKey } : {}),
        };
        const sendHeaders: Record<string, string> = { ...headers };
        if (header && !standardHeader) sendHeaders[header] = ctx.idempotencyKey;
        const body =
          method === "GET" || parsed.body === "none"
            ? undefined
            : { ...a, ...(parsed.clientRefField ? { [parsed.clientRefField]: ctx.idempotencyKey } : {}) };
        const res = await callHttp(callCtx, {
          method,
          url,
          headers: sendHeaders,
          ...(body !== undefined ? { body } : {}),
          ...(parsed.noEffectStatuses ? { noEffectStatuses: parsed.noEffectStatuses } : {}),
        });
        return res.body ?? { status: res.status };
      },
      ...(keyProbe
        ? {
            probe: (a: Record<string, unknown>, ctx: ProbeContext) =>
              probeGet(
                ctx,
                fill(keyProbe.url, (n) => (n === "key" ? ctx.clientRef : a[n]), true),
                keyProbe.found,
                headers,
              ),
          }
        : {}),
      ...(identityProbe
        ? {
            probeByIdentity: (a: Record<string, unknown>, ctx: ProbeContext) =>
              probeGet(
                ctx,
                fill(identityProbe.url, (n) => (n === "since" ? String(ctx.sinceEpochMs) : a[n]), true),
                identityProbe.found,
                headers,
              ),
          }
        : {}),
      ...(compensation
        ? {
            compensation: {
              tool: compensation.tool,
              args: (original: Record<string, unknown>, result: unknown) =>
                Object.fromEntries(
                  Object.entries(compensation.args).map(([f, v]) => [f, compensationValue(v, original, result)]),
                ),
            },
          }
        : {}),
    });
  } catch (error) {
    if (error instanceof TypeError) {
      const m = /^defineTool\([^)]*\): (\S+) (.*)$/s.exec(error.message);
      if (m) throw new CatalogError(d.name, m[1] ?? null, m[2] ?? error.message, { cause: error });
    }
    throw error;
  }
}
