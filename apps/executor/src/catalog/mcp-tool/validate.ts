/**
 * Validation of an upstream MCP tool declaration beyond its schema: the checks every declarative
 * tool has (`../declaration/validate.ts`: arguments, identity, loggable and secret fields,
 * `describe`), `keyField` not clashing with an argument, probe templates naming known values.
 */
import { toolKindPolicy } from "@tristate/core";
import { CatalogError } from "../catalog-error.ts";
import { checkDescribe, checkFieldLists, checkIdentity, parseDeclaration } from "../declaration/validate.ts";
import type { Args } from "../http-tool/arguments.ts";
import { placeholders } from "../http-tool/url-template.ts";
import { mcpDeclarationSchema, type ParsedMcpDeclaration } from "./schema.ts";

/** A declaration that passed every check, with its parsed arguments. */
export interface ValidMcpDeclaration {
  declaration: ParsedMcpDeclaration;
  args: Args;
}

/**
 * Validates one `mcpTools` entry.
 * @param index its position in the catalog, to name a tool without a valid name (`#3`).
 * @throws CatalogError naming the tool and the field, e.g.
 *   `catalog: tool "open_ticket": keyProbe.args.ref: {args.reff} is not an argument field`.
 */
export function validateMcpDeclaration(raw: unknown, index: number): ValidMcpDeclaration {
  const { d, args } = parseDeclaration(mcpDeclarationSchema, "MCP", raw, index);
  const isArg = (f: string) => args.fields.has(f);
  checkIdentity(d, args);
  if (d.keyField !== undefined && isArg(d.keyField)) {
    throw new CatalogError(
      d.name,
      "keyField",
      `"${d.keyField}" is a declared argument; the key field is filled by the executor, never by the model`,
    );
  }
  if (toolKindPolicy(d.kind).remoteDedupesKey && d.keyField === undefined) {
    throw new CatalogError(
      d.name,
      "keyField",
      "is required for an idempotent_by_key tool: the argument of the upstream tool that carries the idempotency key",
    );
  }
  if (d.keyProbe) {
    if (d.keyField === undefined) {
      throw new CatalogError(
        d.name,
        "keyProbe",
        "needs keyField: a key probe finds the effect by the key the call carried",
      );
    }
    checkProbeArgs(d.name, "keyProbe", d.keyProbe.args, args, "key");
  }
  if (d.identityProbe) checkProbeArgs(d.name, "identityProbe", d.identityProbe.args, args, "since");
  checkFieldLists(d, args);
  checkDescribe(d, args);
  return { declaration: d, args };
}

/**
 * Checks a probe's argument templates: `{args.<required argument>}` and the probe's special value
 * (`{key}` or `{since}`), which must appear somewhere.
 * @throws CatalogError naming `<probe>.args.<field>`.
 */
function checkProbeArgs(
  tool: string,
  probe: string,
  probeArgs: Record<string, unknown>,
  args: Args,
  special: "key" | "since",
): void {
  let usesSpecial = false;
  for (const [field, value] of Object.entries(probeArgs)) {
    if (typeof value !== "string") continue;
    for (const ref of placeholders(value)) {
      if (ref === special) {
        usesSpecial = true;
        continue;
      }
      const [scope, name, ...rest] = ref.split(".");
      const arg = scope === "args" && rest.length === 0 && name ? args.fields.get(name) : undefined;
      if (!arg) {
        throw new CatalogError(
          tool,
          `${probe}.args.${field}`,
          `{${ref}} is not {${special}} or {args.<argument field>} (fields: ${[...args.fields.keys()].join(", ")})`,
        );
      }
      if (!arg.required) {
        throw new CatalogError(
          tool,
          `${probe}.args.${field}`,
          `{${ref}} names an optional argument; it must be required`,
        );
      }
    }
  }
  if (special === "key" && !usesSpecial) {
    throw new CatalogError(tool, `${probe}.args`, "must pass {key} to the probe tool (it finds the effect by the key)");
  }
}
