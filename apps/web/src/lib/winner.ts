/** Who changed a record first, as the executor's STALE_VERSION refusal says (`error.data.detail.winner`). */
export interface Winner {
  by: "operator" | "executor";
  actor: string;
  action: string;
  at: number;
  note: string;
}

/** Reads `detail.winner` from a tRPC error's data, if it has one. */
export function winnerOf(data: unknown): Winner | null {
  const winner = (data as { detail?: { winner?: unknown } } | null | undefined)?.detail?.winner;
  if (!winner || typeof winner !== "object") return null;
  const w = winner as Record<string, unknown>;
  if (typeof w.actor !== "string") return null;
  return {
    by: w.by === "operator" ? "operator" : "executor",
    actor: w.actor,
    action: typeof w.action === "string" ? w.action : "a change",
    at: typeof w.at === "number" ? w.at : Date.now(),
    note: typeof w.note === "string" ? w.note : "",
  };
}
