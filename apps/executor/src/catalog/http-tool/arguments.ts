/**
 * The declared arguments of an HTTP tool: read from either form of the declaration (a JSON Schema
 * object or a list of fields), and turned into the zod schema the executor validates calls with.
 */
import { type ZodType, z } from "zod";
import { unknownFieldError, unknownKeysError } from "../../unknown-keys.ts";
import { CatalogError } from "../catalog-error.ts";
import { fieldListSchema, objectArgsSchema, type propertySchema } from "../declaration/schema.ts";
import { catalogErrorOf } from "./issues.ts";

/** One declared argument field, with whether it is required. */
export type Property = z.infer<typeof propertySchema> & { required: boolean };

/**
 * Declared argument fields; `strict` refuses undeclared ones. Strict unless the JSON Schema form
 * says `additionalProperties: true` (issue 22: a misspelt `reasn` was dropped, the refund sent without
 * its reason); the list form is always strict.
 */
export interface Args {
  /** The fields by name, in declaration order. */
  fields: Map<string, Property>;
  strict: boolean;
}

/**
 * The declared argument fields, from either form.
 * @param tool the tool's name, for errors.
 * @throws CatalogError naming `args.<…>` (a missing `args`, a bad field, a field declared twice, a
 *   `required` entry that is not a property).
 */
export function parseArgs(tool: string, raw: unknown): Args {
  if (raw === undefined) throw new CatalogError(tool, "args", "is required");
  const out = new Map<string, Property>();
  if (Array.isArray(raw)) {
    const parsed = fieldListSchema.safeParse(raw, { error: unknownFieldError });
    if (!parsed.success) throw catalogErrorOf(tool, parsed.error, raw, ["args"]);
    for (const [i, f] of parsed.data.entries()) {
      if (out.has(f.name)) throw new CatalogError(tool, `args.${i}.name`, `field "${f.name}" is declared twice`);
      const { name, ...rest } = f;
      out.set(name, rest);
    }
    return { fields: out, strict: true };
  }
  const parsed = objectArgsSchema.safeParse(raw, { error: unknownFieldError });
  if (!parsed.success) throw catalogErrorOf(tool, parsed.error, raw, ["args"]);
  for (const [i, r] of parsed.data.required.entries()) {
    if (!(r in parsed.data.properties)) throw new CatalogError(tool, `args.required.${i}`, `"${r}" is not a property`);
  }
  for (const [name, p] of Object.entries(parsed.data.properties)) {
    out.set(name, { ...p, required: parsed.data.required.includes(name) });
  }
  return { fields: out, strict: parsed.data.additionalProperties !== true };
}

/** Values that would make a whole path segment `.`, `..` or empty (see `fillUrl`). */
const DOT_SEGMENT = /^\.{0,2}$/;

/**
 * The zod schema of the declared arguments (it also yields the JSON Schema of `tools.list`): an
 * object of the declared fields, optional ones `.optional()`; when `args.strict`, an undeclared key is
 * refused (`unknown key "reasn"; allowed keys: order_id, …`, JSON Schema `additionalProperties: false`).
 * @param segmentFields fields that are a whole path segment of a URL: `.`, `..` and `""` are refused
 *   there (they would change the path), so such a call fails validation with the field named.
 */
export function argsSchema(
  args: Args,
  segmentFields: ReadonlySet<string> = new Set(),
): ZodType<Record<string, unknown>> {
  const shape: Record<string, ZodType> = {};
  for (const [name, p] of args.fields) {
    let schema = fieldSchema(p);
    if (segmentFields.has(name)) {
      schema = schema.refine((v) => typeof v !== "string" || !DOT_SEGMENT.test(v), {
        message: 'must not be ".", ".." or empty: it is a whole path segment of the URL, whose path it would change',
      });
    }
    if (p.description) schema = schema.describe(p.description);
    shape[name] = p.required ? schema : schema.optional();
  }
  const object = args.strict ? z.strictObject(shape, { error: unknownKeysError }) : z.object(shape);
  return object as unknown as ZodType<Record<string, unknown>>;
}

function fieldSchema(p: Property): ZodType {
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
        if (p.multipleOf !== undefined) n = n.multipleOf(p.multipleOf);
        return n;
      }
      default:
        return z.boolean();
    }
  });
  const schema: ZodType = variants.length === 1 ? variants[0]! : z.union(variants as [ZodType, ZodType]);
  if (!p.enum) return schema;
  const allowed = p.enum;
  return schema.refine((v) => allowed.includes(v as string), {
    message: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(", ")}`,
  });
}
