/**
 * The checks every declarative tool's declaration goes through, whatever its format: an object that
 * passes its schema, arguments that parse, identity fields that are required arguments, loggable and
 * secret fields that are arguments (and never both), an effect phrase naming arguments. Each
 * format's `validate.ts` runs them in its order around its own checks (URL templates, `keyField`, …).
 */
import { toolKindPolicy } from "@tristate/core";
import type { z } from "zod";
import { unknownFieldError } from "../../unknown-keys.ts";
import { CatalogError } from "../catalog-error.ts";
import { type Args, parseArgs } from "../http-tool/arguments.ts";
import { catalogErrorOf } from "../http-tool/issues.ts";
import { placeholders } from "../http-tool/url-template.ts";
import type { BaseDeclaration } from "./schema.ts";

/**
 * Parses one declaration with its format's schema, then its arguments.
 * @param format the format's name in errors (`HTTP`, `MCP`).
 * @param index its position in the catalog, to name a tool without a valid name (`#3`).
 * @returns the declaration after the schema and its parsed arguments.
 * @throws CatalogError naming the tool (or `#<index>`) and the field.
 */
export function parseDeclaration<S extends z.ZodType<BaseDeclaration>>(
  schema: S,
  format: string,
  raw: unknown,
  index: number,
): { d: z.output<S>; args: Args } {
  const rawName = (raw as { name?: unknown } | null)?.name;
  const label = typeof rawName === "string" && rawName !== "" ? rawName : `#${index}`;
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new CatalogError(label, null, `an ${format} tool declaration must be an object`);
  }
  const parsed = schema.safeParse(raw, { error: unknownFieldError });
  if (!parsed.success) throw catalogErrorOf(label, parsed.error, raw);
  const d = parsed.data;
  return { d, args: parseArgs(d.name, d.args) };
}

/**
 * Identity fields: at least one for a side-effecting tool, each a required argument.
 * @throws CatalogError naming `identity` or `identity.<field>`.
 */
export function checkIdentity(d: BaseDeclaration, args: Args): void {
  const identity = Object.keys(d.identity);
  if (toolKindPolicy(d.kind).hasEffect && identity.length === 0) {
    throw new CatalogError(d.name, "identity", "must declare at least one field for a side-effecting tool");
  }
  for (const field of identity) {
    if (!args.fields.has(field)) throw new CatalogError(d.name, `identity.${field}`, "is not an argument field");
    if (!args.fields.get(field)?.required) {
      throw new CatalogError(d.name, `identity.${field}`, "must be a required argument");
    }
  }
}

/**
 * `loggableFields` and `secretFields`: argument fields (a secret field's first segment), and no
 * secret field that is, contains or lies under a loggable one (`defineTool`'s rule, said earlier).
 * @throws CatalogError naming `loggableFields.<i>` or `secretFields.<i>`.
 */
export function checkFieldLists(d: BaseDeclaration, args: Args): void {
  for (const [i, f] of (d.loggableFields ?? []).entries()) {
    if (!args.fields.has(f)) throw new CatalogError(d.name, `loggableFields.${i}`, `"${f}" is not an argument field`);
  }
  for (const [i, f] of (d.secretFields ?? []).entries()) {
    if (!args.fields.has(f.split(".")[0] ?? "")) {
      throw new CatalogError(d.name, `secretFields.${i}`, `"${f}" is not an argument field`);
    }
    const clash = (d.loggableFields ?? []).find((l) => l === f || l.startsWith(`${f}.`) || f.startsWith(`${l}.`));
    if (clash !== undefined) {
      throw new CatalogError(
        d.name,
        `secretFields.${i}`,
        `"${f}" is secret, so it can never be loggable, but loggableFields has "${clash}": remove one of them`,
      );
    }
  }
}

/**
 * `describe`: its `{field}` placeholders name argument fields.
 * @throws CatalogError naming `describe`.
 */
export function checkDescribe(d: BaseDeclaration, args: Args): void {
  if (!d.describe) return;
  for (const name of placeholders(d.describe)) {
    if (!args.fields.has(name)) throw new CatalogError(d.name, "describe", `{${name}} is not an argument field`);
  }
}
