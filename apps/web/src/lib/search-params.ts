/** A page's `searchParams` as Next.js passes them. */
export type SearchParams = Record<string, string | string[] | undefined>;

/** The first value of each search parameter. */
export function firstValues(params: SearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) out[name] = first;
  }
  return out;
}
