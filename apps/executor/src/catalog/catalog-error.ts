/**
 * An invalid tool catalog. The message names the tool and the field, e.g.
 * `catalog: tool "issue_refund": identity.amount: unknown canonicaliser "decimal:x"`.
 */
export class CatalogError extends Error {
  override readonly name = "CatalogError";
  /** The tool at fault, or null for a problem of the catalog as a whole. */
  readonly tool: string | null;
  /** The field at fault (dot path inside the tool's declaration), or null. */
  readonly field: string | null;
  constructor(tool: string | null, field: string | null, rule: string, options?: { cause?: unknown }) {
    const where = [tool === null ? null : `tool ${JSON.stringify(tool)}`, field].filter((p) => p !== null && p !== "");
    super(`catalog: ${[...where, rule].join(": ")}`, options);
    this.tool = tool;
    this.field = field;
  }
}
