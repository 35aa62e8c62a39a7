/** HTTP plumbing of the service: JSON replies, bounded body reading, argument parsing, 4xx errors. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type PyDict, PyJsonSyntaxError, pyParse } from "../domain/py-json.ts";

/** An error answered as `{ error: code, message }` with its status. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Sends a JSON reply. */
export function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Reads the request body (413 past `limit` bytes). */
export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new HttpError(413, "body_too_large", `request body exceeds ${limit} bytes`));
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** Parses a JSON object body into tool arguments (400 otherwise). */
export function parseArgs(text: string): PyDict {
  let v: unknown;
  try {
    v = pyParse(text.trim() === "" ? "{}" : text, { rejectLoneSurrogates: true });
  } catch (e) {
    if (e instanceof PyJsonSyntaxError) throw new HttpError(400, "malformed_json", `malformed JSON body: ${e.message}`);
    throw e;
  }
  if (!(v instanceof Map)) throw new HttpError(400, "body_not_object", "the body must be a JSON object of arguments");
  return v;
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
