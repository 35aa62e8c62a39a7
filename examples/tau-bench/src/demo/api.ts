/** Small helpers of the demo: one tRPC call over HTTP, and an envelope printed for people. */
import type { Envelope } from "@tristate/core";

/**
 * Calls a tRPC procedure of the executor API: a mutation (POST, input as body) for names ending in
 * `execute`, `plan`, `abort`, else a query (GET `?input=`).
 * @throws Error with the API's error body for a non-2xx answer.
 */
export async function apiCall(url: string, key: string, procedure: string, input: unknown): Promise<unknown> {
  const mutation = /\.(execute|plan|abort|resolve|create)$/.test(procedure);
  const res = await fetch(
    mutation
      ? `${url}/trpc/${procedure}`
      : `${url}/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify(input))}`,
    {
      method: mutation ? "POST" : "GET",
      headers: { authorization: `Bearer ${key}`, ...(mutation ? { "content-type": "application/json" } : {}) },
      ...(mutation ? { body: JSON.stringify(input) } : {}),
    },
  );
  const body = (await res.json()) as { result?: { data?: unknown }; error?: unknown };
  if (!res.ok) throw new Error(`${procedure} → ${res.status}: ${JSON.stringify(body.error ?? body)}`);
  return body.result?.data;
}

/** Prints one envelope (status, retry_safe, resolution, what happened, what to do). */
export function printEnvelope(label: string, value: unknown): void {
  const e = value as Envelope;
  console.log(`\n▸ ${label}`);
  console.log(
    `  ${e.status}  retry_safe=${e.retry_safe}  replayed=${e.replayed}  attempt=${e.attempt}${e.resolution ? `  resolution=${e.resolution}` : ""}`,
  );
  console.log(`  effect:  ${e.effect}`);
  console.log(`  action:  ${e.action_taken}`);
  console.log(`  message: ${e.message}`);
}
