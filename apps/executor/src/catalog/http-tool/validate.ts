/**
 * Validation of an HTTP tool declaration beyond its schema: the checks every declarative tool has
 * (`../declaration/validate.ts`: arguments, identity, loggable and secret fields, `describe`), URL
 * templates naming only required argument fields, `clientRefField`, compensation references.
 */
import { CatalogError } from "../catalog-error.ts";
import { checkDescribe, checkFieldLists, checkIdentity, parseDeclaration } from "../declaration/validate.ts";
import type { Args } from "./arguments.ts";
import { declarationSchema, type ParsedDeclaration } from "./schema.ts";
import { originPart, placeholders, wholeSegmentPlaceholders } from "./url-template.ts";

/** A declaration that passed every check, with its parsed arguments. */
export interface ValidDeclaration {
  /** The declaration after its schema (defaults filled, method upper-cased). */
  declaration: ParsedDeclaration;
  args: Args;
  /** Argument fields that are a whole path segment of a URL on their own (`/customers/{id}/notify`). */
  segmentFields: ReadonlySet<string>;
}

/**
 * Validates one declaration.
 * @param index its position in the catalog, to name a tool without a valid name (`#3`).
 * @throws CatalogError naming the tool and the field, e.g.
 *   `catalog: tool "issue_refund": url: {orderId} is not an argument field (allowed: …)`.
 */
export function validateDeclaration(raw: unknown, index: number): ValidDeclaration {
  const { d, args } = parseDeclaration(declarationSchema, "HTTP", raw, index);
  const isArg = (f: string) => args.fields.has(f);
  checkIdentity(d, args);
  checkUrl(d.name, "url", d.url, args, ["key"]);
  if (d.keyProbe) checkUrl(d.name, "keyProbe.url", d.keyProbe.url, args, ["key"], "key");
  if (d.identityProbe) checkUrl(d.name, "identityProbe.url", d.identityProbe.url, args, ["since"], "since");
  checkFieldLists(d, args);
  if (d.clientRefField && isArg(d.clientRefField)) {
    throw new CatalogError(d.name, "clientRefField", `"${d.clientRefField}" is already an argument field`);
  }
  checkDescribe(d, args);
  for (const [field, value] of Object.entries(d.compensation?.args ?? {})) {
    if (typeof value !== "string") continue;
    for (const ref of placeholders(value)) {
      const [scope, ...rest] = ref.split(".");
      if (scope === "args" && rest.length > 0 && isArg(rest[0] ?? "")) continue;
      if (scope === "result" && rest.join(".")) continue;
      throw new CatalogError(
        d.name,
        `compensation.args.${field}`,
        `{${ref}} must be {args.<argument field>} or {result.<path>}`,
      );
    }
  }
  const urls = [d.url, d.keyProbe?.url, d.identityProbe?.url].filter((u): u is string => u !== undefined);
  const segmentFields = new Set(urls.flatMap(wholeSegmentPlaceholders).filter(isArg));
  return { declaration: d, args, segmentFields };
}

/**
 * Checks a URL template: no placeholder in its scheme or authority (user, password, host, port: they
 * come from the catalog only), known placeholders only (required argument fields or `specials`), the
 * `mustHave` placeholder present, an absolute http(s) URL once filled in.
 * @throws CatalogError naming `field`.
 */
function checkUrl(
  tool: string,
  field: string,
  template: string,
  args: Args,
  specials: string[],
  mustHave?: string,
): void {
  const origin = originPart(template);
  const inOrigin = placeholders(origin);
  if (inOrigin.length > 0 || origin.includes("{") || origin.includes("}")) {
    throw new CatalogError(
      tool,
      field,
      `${inOrigin.map((n) => `{${n}}`).join(", ") || "a placeholder"} is in the URL's scheme or authority (${JSON.stringify(origin)}): ` +
        "the scheme, user, host and port come from the catalog only; placeholders may fill the path and the query",
    );
  }
  if (!/^https?:\/\/[^/\\?#]/i.test(template)) {
    throw new CatalogError(tool, field, `must be an absolute http(s) URL template, got ${JSON.stringify(template)}`);
  }
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
    url = new URL(template.replace(/\{[^{}]*\}/g, "x"));
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new CatalogError(tool, field, `must be an absolute http(s) URL template, got ${JSON.stringify(template)}`);
  }
}
