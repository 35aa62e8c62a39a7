/**
 * The step of a call that names none: the tool and its canonical identity. Used by MCP (no plan
 * step; request ids change on every retry) and by `calls.execute` without a `stepId` (the SDK
 * adapters' default). A repeat of the same tool with the same identity in the same run is the same
 * step, so it replays or reconciles instead of sending again; two deliberate calls with the same
 * identity need two named steps. Different identities (two refunds of two orders) are two steps.
 */
import { createHash } from "node:crypto";
import { type AnyTool, canonicalIdentity } from "@tristate/core";

/**
 * `<prefix>:<tool>:<16 hex of SHA-256 of the canonical identity>` from the tool's canonical identity
 * of the (schema-parsed) arguments — `mcp:` under MCP, `auto:` for `calls.execute`. Arguments the
 * tool's schema or canonicalisers refuse give `<prefix>:<tool>:invalid` and an unknown tool
 * `<prefix>:<tool>:unknown`: the executor refuses such calls before writing anything, so no record
 * is ever made under them.
 */
export function identityStep(
  prefix: "mcp" | "auto",
  toolName: string,
  tool: AnyTool | undefined,
  args: Record<string, unknown>,
): string {
  if (!tool) return `${prefix}:${toolName}:unknown`;
  try {
    const parsed = tool.args ? tool.args.parse(args) : args;
    const identity = canonicalIdentity(parsed, tool.identity);
    const canonical = JSON.stringify(Object.entries(identity).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return `${prefix}:${toolName}:${createHash("sha256").update(canonical, "utf8").digest("hex").slice(0, 16)}`;
  } catch {
    return `${prefix}:${toolName}:invalid`;
  }
}
