/**
 * What a catalog module (`tristate.config.ts`) imports: `defineCatalog` and the pieces to declare
 * tools (`defineTool`, `canon`, `callHttp`, errors, `z`), so the module needs no dependency of its own.
 */
import type { AnyTool } from "@tristate/core";
import type { Env } from "../env.ts";
import type { HttpToolDeclaration } from "./http-tool.ts";
import type { McpToolDeclaration } from "./mcp-tool.ts";

/** The contents of a catalog module. */
export interface Catalog {
  /** Tools made with `defineTool`. */
  tools?: AnyTool[];
  /** Declarative HTTP tools (the JSON format). */
  httpTools?: HttpToolDeclaration[];
  /** Paths of `.json` files of declarative HTTP tools (`[...]` or `{ "httpTools": [...] }`), relative to the module. */
  httpToolFiles?: string[];
  /** Tools of upstream MCP servers (Streamable HTTP or stdio), called through the executor. */
  mcpTools?: McpToolDeclaration[];
  /**
   * Hosts the declarative HTTP tools may call; absent: any host the catalog names. An entry is an
   * exact host (`payments.internal`, `10.0.0.7`, `::1`: called whatever it resolves to), `*.<domain>`
   * or `*` (hosts under that domain / any host, only while every address it resolves to is public:
   * not loopback, private, link-local, unique-local, …). Checked when the catalog loads and, after
   * DNS resolution, before every request (refused: FAILED_NO_EFFECT, `INVALID_ARGUMENTS`).
   */
  httpAllowHosts?: string[];
}

/** A catalog, or a function of the service's validated configuration that returns one. */
export type CatalogDefinition = Catalog | ((env: Env) => Catalog | Promise<Catalog>);

/** Identity function that types a catalog module's default export (a catalog, or a function of the env). */
export function defineCatalog(catalog: CatalogDefinition): CatalogDefinition {
  return catalog;
}

export {
  AmbiguousError,
  type AnyTool,
  callHttp,
  canon,
  defineTool,
  NotSentError,
  RejectedError,
} from "@tristate/core";
export { z } from "zod";
export type { Env } from "../env.ts";
export type { FoundRule, HttpToolArg, HttpToolDeclaration } from "./http-tool.ts";
export type { McpFoundRule, McpToolDeclaration } from "./mcp-tool.ts";
