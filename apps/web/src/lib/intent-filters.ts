/** Filters of the `/intents` list as they appear in its URL. `resolution=human` means any of the three human ones. */
export interface IntentListQuery {
  tool?: string;
  status?: string;
  resolution?: string;
  fromEpochMs?: number;
  toEpochMs?: number;
}

/** The `/intents?…` link for these filters. */
export function intentListHref(query: IntentListQuery): string {
  const params = new URLSearchParams();
  if (query.tool) params.set("tool", query.tool);
  if (query.status) params.set("status", query.status);
  if (query.resolution) params.set("resolution", query.resolution);
  if (query.fromEpochMs !== undefined) params.set("from", String(query.fromEpochMs));
  if (query.toEpochMs !== undefined) params.set("to", String(query.toEpochMs));
  const search = params.toString();
  return search ? `/intents?${search}` : "/intents";
}
