/** Request and response bodies and headers of `callHttp` (http.ts). */

/**
 * A request body as undici takes it: strings and bytes as they are, anything else as JSON.
 * @throws TypeError for a value JSON cannot encode.
 */
export function encodeBody(body: unknown): { payload: string | Uint8Array | undefined; json: boolean } {
  if (body === undefined) return { payload: undefined, json: false };
  if (typeof body === "string") return { payload: body, json: false };
  if (body instanceof Uint8Array) return { payload: body, json: false };
  if (body instanceof ArrayBuffer) return { payload: new Uint8Array(body), json: false };
  const text = JSON.stringify(body);
  if (text === undefined) throw new TypeError(`body of type ${typeof body} is not JSON-serialisable`);
  return { payload: text, json: true };
}

/** Response headers with lower-cased names; repeated headers joined with `, `. */
export function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/** A response body: parsed JSON for a JSON content type (text when it does not parse), else text; undefined when empty. */
export function parseBody(status: number, method: string, headers: Record<string, string>, bytes: Buffer): unknown {
  if (status === 204 || method === "HEAD" || bytes.length === 0) return undefined;
  const text = bytes.toString("utf8");
  const type = headers["content-type"] ?? "";
  if (/^application\/(?:[\w.!#$&^-]+\+)?json\b/i.test(type)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}
