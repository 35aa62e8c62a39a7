/**
 * Argument type checks against the upstream JSON-Schema in `<domain>/tools.json` (types, array items
 * and object properties only — enums are left to the tools, which answer them with their own errors).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { DomainName } from "./database.ts";
import { PyFloat, type PyValue } from "./py-json.ts";

/** The subset of JSON-Schema used by tools.json. */
export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  required?: string[];
  enum?: unknown[];
}

/** One `tools.json` entry. */
export interface ToolSchema {
  name: string;
  kind: "read" | "write";
  parameters: JsonSchema;
}

/** Reads `<dataDir>/<domain>/tools.json`. */
export function loadToolSchemas(dataDir: string, domain: DomainName): ToolSchema[] {
  return JSON.parse(readFileSync(join(dataDir, domain, "tools.json"), "utf8")) as ToolSchema[];
}

function typeOk(type: string | undefined, v: PyValue): boolean {
  switch (type) {
    case undefined:
      return true;
    case "string":
      return typeof v === "string";
    case "number":
      return typeof v === "number" || v instanceof PyFloat;
    case "integer":
      return (typeof v === "number" || v instanceof PyFloat) && Number.isInteger(typeof v === "number" ? v : v.value);
    case "boolean":
      return typeof v === "boolean";
    case "array":
      return Array.isArray(v);
    case "object":
      return v instanceof Map;
    case "null":
      return v === null;
    default:
      return true;
  }
}

/** Type problems of a value against a schema, as `path: expected type` strings (empty when valid). */
export function typeProblems(schema: JsonSchema, v: PyValue, path = "$"): string[] {
  if (!typeOk(schema.type, v)) return [`${path}: expected ${schema.type}`];
  const out: string[] = [];
  const items = schema.items;
  if (Array.isArray(v) && items) {
    for (const [k, x] of v.entries()) out.push(...typeProblems(items, x, `${path}[${k}]`));
  }
  if (v instanceof Map && schema.properties) {
    for (const [k, sub] of Object.entries(schema.properties)) {
      const x = v.get(k);
      if (x === undefined) {
        if (path !== "$" && schema.required?.includes(k)) out.push(`${path}.${k}: required`);
        continue;
      }
      out.push(...typeProblems(sub, x, `${path}.${k}`));
    }
  }
  return out;
}
