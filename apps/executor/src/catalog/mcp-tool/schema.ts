/**
 * The JSON format of a declarative MCP tool (`mcpTools` in a catalog): a tool of an upstream MCP
 * server (Streamable HTTP URL or stdio command) called through the executor, with the intent log,
 * deadline, three outcomes and probes added. Probes are tools of the same upstream server. The
 * fields every declarative tool has are the base schema's (`../declaration/schema.ts`); the
 * TypeScript types are derived from the zod schemas (`z.input`), so the format is written once;
 * cross-field rules (templates naming argument fields, identity fields being required arguments)
 * are checked in `validate.ts`.
 */
import { z } from "zod";
import { declarationShape, fieldName, probeStateSchema, toolName } from "../declaration/schema.ts";

/** An MCP tool name (the SDK's rule: 1–128 of letters, digits, `_`, `-`, `.`). */
const mcpToolName = toolName;
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);

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
    /** What the found item's state means (done, failed, in progress; `"always_done"`); without it a find proves delivery only. */
    state: probeStateSchema.optional(),
  })
  .strict();

/**
 * The declaration of one upstream MCP tool: the base fields every declarative tool has (see
 * `baseDeclarationSchema`; `name` is also the MCP tool name Tristate exposes) and the upstream's.
 * Its arguments are passed to the upstream tool as they are, plus the idempotency key under `keyField`.
 */
export const mcpDeclarationSchema = z
  .object(
    declarationShape(
      {
        /** The upstream server. */
        server: serverSchema,
        /**
         * The base's `args` (a JSON Schema object of scalar properties, or a list of fields), typed
         * `unknown` here as it always was, so declarations written with `as const` keep compiling.
         */
        args: z.unknown(),
        /** The upstream tool's name; default: `name`. */
        tool: mcpToolName.optional(),
        /**
         * An argument of the upstream tool that carries the idempotency key (a request id or client
         * reference): the upstream dedupes on it (`idempotent_by_key`) and/or a key probe finds the
         * effect by it. Not one of the declared arguments.
         */
        keyField: fieldName.optional(),
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
      },
      // The order the fields were always checked in (the first invalid one is reported).
      [
        "name",
        "description",
        "kind",
        "server",
        "tool",
        "args",
        "identity",
        "keyField",
        "timeoutMs",
        "keyRetentionMs",
        "keyProbe",
        "identityProbe",
        "errorResults",
        "settleMs",
        "resendWhenAbsent",
        "irreversible",
        "loggableFields",
        "secretFields",
        "describe",
      ],
    ),
  )
  .strict();

/** A declarative upstream MCP tool as written (the `mcpTools` entries of a catalog). */
export type McpToolDeclaration = z.input<typeof mcpDeclarationSchema>;
/** A declaration after the schema (defaults filled). */
export type ParsedMcpDeclaration = z.output<typeof mcpDeclarationSchema>;
/** An upstream server, as parsed. */
export type McpServerSpec = ParsedMcpDeclaration["server"];
/** A probe, as parsed. */
export type McpProbeSpec = NonNullable<ParsedMcpDeclaration["keyProbe"]>;
