/**
 * The JSON format of a declarative MCP tool (`mcpTools` in a catalog): a tool of an upstream MCP
 * server (Streamable HTTP URL or stdio command) called through the executor, with the intent log,
 * deadline, three outcomes and probes added. Probes are tools of the same upstream server. The
 * TypeScript types are derived from the zod schemas (`z.input`), so the format is written once;
 * cross-field rules (templates naming argument fields, identity fields being required arguments)
 * are checked in `validate.ts`.
 */
import { TOOL_KINDS } from "@tristate/core";
import { z } from "zod";
import { canonicaliserFor } from "../http-tool/schema.ts";

/** Argument field names: identifiers. */
const fieldName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an identifier (letters, digits, _)");
/** An MCP tool name (the SDK's rule: 1–128 of letters, digits, `_`, `-`, `.`). */
const mcpToolName = z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, "must match /^[A-Za-z0-9_.-]{1,128}$/");
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

const canonicaliserName = z.string().superRefine((value, ctx) => {
  if (!canonicaliserFor(value)) {
    ctx.addIssue({
      code: "custom",
      message: `unknown canonicaliser ${JSON.stringify(value)} (use upper, lower, trim, exact or decimal:<places 0-20>)`,
    });
  }
});

/** An upstream MCP server reached over Streamable HTTP. */
const httpServerSchema = z
  .object({
    /** The server's Streamable HTTP endpoint, e.g. `https://tickets.internal/mcp` (fixed by the catalog). */
    url: z.url({ protocol: /^https?$/, error: "must be an absolute http(s) URL" }),
    /** Static request headers (e.g. `Authorization`), sent with every request to it. */
    headers: z.record(z.string(), z.string()).optional(),
  })
  .strict();

/** An upstream MCP server started as a child process speaking MCP on stdio. */
const stdioServerSchema = z
  .object({
    /** The command, e.g. `node` or `npx`. */
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    /** Environment variables of the child (added to a safe default set: PATH, HOME, …). */
    env: z.record(z.string(), z.string()).optional(),
    /** Working directory of the child. */
    cwd: z.string().min(1).optional(),
  })
  .strict();

/** Where the upstream tool lives: `{ url, headers? }` (Streamable HTTP) or `{ command, args?, env?, cwd? }` (stdio). */
export const serverSchema = z.union([httpServerSchema, stdioServerSchema], {
  error: "must be { url } (Streamable HTTP) or { command, args? } (stdio)",
});

/** How to read "found" from a probe tool's result (its `structuredContent`, else the JSON of its text). */
const foundSchema = z.discriminatedUnion("type", [
  /** The result (or the array at `path`) is an array: non-empty → found (its first item), empty → absent. */
  z.object({ type: z.literal("non_empty_array"), path: z.string().min(1).optional() }).strict(),
  /** The value at `path`: one of `values` → found; else absent, or no evidence unless one of `absentValues`. */
  z
    .object({
      type: z.literal("json_path_equals"),
      path: z.string().min(1),
      values: z.array(scalar).min(1),
      absentValues: z.array(scalar).min(1).optional(),
    })
    .strict(),
  /** The value at `path` (or the whole result): present and not null → found (it); null or missing → absent. */
  z.object({ type: z.literal("not_null"), path: z.string().min(1).optional() }).strict(),
]);

/** How to read "found" from a probe tool's result. */
export type McpFoundRule = z.infer<typeof foundSchema>;

/**
 * A probe: another tool of the same upstream server. Argument values may be literals or templates:
 * `{key}` (the idempotency key, key probe only), `{since}` (the intent's creation time, epoch ms,
 * identity probe only) and `{args.<field>}`; a lone placeholder keeps the value's type.
 */
const probeSchema = z
  .object({
    tool: mcpToolName,
    args: z.record(fieldName, scalar).default({}),
    found: foundSchema,
  })
  .strict();

/**
 * The declaration of one upstream MCP tool. Its arguments are declared like an HTTP tool's (a JSON
 * Schema object of scalar properties, or a list of fields) and passed to the upstream tool as they
 * are, plus the idempotency key under `keyField`.
 */
export const mcpDeclarationSchema = z
  .object({
    /** The catalog's name for it (and the MCP tool name Tristate exposes). */
    name: z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, "must match /^[A-Za-z0-9_.-]{1,128}$/"),
    description: z.string().optional(),
    kind: z.enum(TOOL_KINDS),
    /** The upstream server. */
    server: serverSchema,
    /** The upstream tool's name; default: `name`. */
    tool: mcpToolName.optional(),
    /** A JSON Schema object of string/number/integer/boolean properties, or a list of fields. */
    args: z.unknown(),
    /** Identity fields and their canonicalisers: `upper`, `lower`, `trim`, `exact`, `decimal:<places>`. */
    identity: z.record(z.string(), canonicaliserName).default({}),
    /**
     * An argument of the upstream tool that carries the idempotency key (a request id or client
     * reference): the upstream dedupes on it (`idempotent_by_key`) and/or a key probe finds the
     * effect by it. Not one of the declared arguments.
     */
    keyField: fieldName.optional(),
    /** Timeout of one call, ms (at most one hour). */
    timeoutMs: z.number().int().positive().max(3_600_000),
    /** How long the upstream remembers keys, ms (default 24 h). */
    keyRetentionMs: z.number().int().positive().optional(),
    /** Key probe: a tool of the same server, found by `{key}`. */
    keyProbe: probeSchema.optional(),
    /** Identity probe: a tool of the same server, effects matching the identity since `{since}`. */
    identityProbe: probeSchema.optional(),
    /**
     * What an `isError: true` result of the upstream tool means (one that is not the MCP SDK's own
     * refusal of the arguments before the tool ran, which is always no effect): `unknown` (default:
     * the tool ran, and its error is no proof that nothing happened → UNKNOWN, reconciled) or
     * `no_effect` (the tool documents that an error result means it did nothing → FAILED_NO_EFFECT).
     */
    errorResults: z.enum(["unknown", "no_effect"]).default("unknown"),
    /** Settle window, ms (see `settleMs` of `defineTool`). */
    settleMs: z.number().int().nonnegative().max(86_400_000).optional(),
    resendWhenAbsent: z.boolean().optional(),
    irreversible: z.boolean().optional(),
    loggableFields: z.array(z.string()).optional(),
    secretFields: z.array(z.string()).optional(),
    /** Effect phrase template, e.g. `ticket "{subject}"`. */
    describe: z.string().optional(),
  })
  .strict();

/** A declarative upstream MCP tool as written (the `mcpTools` entries of a catalog). */
export type McpToolDeclaration = z.input<typeof mcpDeclarationSchema>;
/** A declaration after the schema (defaults filled). */
export type ParsedMcpDeclaration = z.output<typeof mcpDeclarationSchema>;
/** An upstream server, as parsed. */
export type McpServerSpec = ParsedMcpDeclaration["server"];
/** A probe, as parsed. */
export type McpProbeSpec = NonNullable<ParsedMcpDeclaration["keyProbe"]>;
