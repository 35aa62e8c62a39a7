/** What `tristate mcp` (bridge.ts by default, stdio.ts with `--direct`) reads and writes. */

/** The environment variable holding the API key of `tristate mcp`. */
export const API_KEY_VARIABLE = "TRISTATE_API_KEY";

/** Where `tristate mcp` reads and writes; injectable for tests. */
export interface StdioIo {
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream & { on(event: "end" | "close", listener: () => void): unknown };
  stdout: NodeJS.WritableStream;
  /** Diagnostics (never stdout). */
  err(text: string): void;
}
