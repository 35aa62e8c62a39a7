/**
 * Declarative HTTP tools: a JSON declaration (method, URL template, argument fields, identity fields
 * with canonicalisers, idempotency header, key and identity probes and how to read "found" from
 * their answers, how to read 2xx answers, timeouts, key retention, compensation) turned into a
 * `defineTool` tool that calls the remote through `callHttp`. The pieces live in `http-tool/`:
 * `schema.ts` (the format and its types), `validate.ts`, `arguments.ts`, `url-template.ts`,
 * `redaction.ts`, `probes.ts`, `answers.ts` and `build.ts`.
 */
export { httpTool } from "./http-tool/build.ts";
export type {
  FoundRule,
  HttpToolArg,
  HttpToolDeclaration,
} from "./http-tool/schema.ts";
