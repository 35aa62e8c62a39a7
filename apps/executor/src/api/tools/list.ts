import { TOOL_KINDS } from "@tristate/core";
import { z } from "zod";
import { anyKeyProcedure } from "../../trpc/init.ts";

/** One catalog entry, as a model's tool list needs it. */
export const toolInfoSchema = z.object({
  name: z.string(),
  kind: z.enum(TOOL_KINDS),
  description: z.string().nullable(),
  /** JSON Schema (draft 2020-12) of the arguments. */
  argsJsonSchema: z.record(z.string(), z.unknown()),
  identityFields: z.array(z.string()),
  timeoutMs: z.number(),
  keyRetentionMs: z.number(),
  hasKeyProbe: z.boolean(),
  hasIdentityProbe: z.boolean(),
  hasCompensation: z.boolean(),
  irreversible: z.boolean(),
});

/** `tools.list` → the catalog. */
export const toolsListProcedure = anyKeyProcedure.output(z.array(toolInfoSchema)).query(({ ctx }) =>
  [...ctx.services.executor.tools.values()].map((tool) => ({
    name: tool.name,
    kind: tool.kind,
    description: tool.description ?? null,
    argsJsonSchema: tool.args
      ? (z.toJSONSchema(tool.args, { unrepresentable: "any", io: "input" }) as Record<string, unknown>)
      : { type: "object" },
    identityFields: Object.keys(tool.identity),
    timeoutMs: tool.timeoutMs,
    keyRetentionMs: tool.keyRetentionMs,
    hasKeyProbe: Boolean(tool.probe),
    hasIdentityProbe: Boolean(tool.probeByIdentity),
    hasCompensation: Boolean(tool.compensation),
    irreversible: Boolean(tool.irreversible),
  })),
);
