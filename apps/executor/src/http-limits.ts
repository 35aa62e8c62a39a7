import type { ServerResponse } from "node:http";
import { currentRequestId } from "./request-id.ts";

/**
 * Writes an error the way tRPC answers one (`{"error":{"message","code","data":{"code","httpStatus"}}}`,
 * with `data.requestId` inside a request), for refusals made before a request reaches tRPC.
 * `@trpc/client` reads it for every call of a batch.
 */
export function writeTrpcError(
  res: ServerResponse,
  httpStatus: number,
  code: string,
  message: string,
  extra: Record<string, unknown> = {},
): void {
  const requestId = currentRequestId();
  const data = { code, httpStatus, ...extra, ...(requestId !== undefined ? { requestId } : {}) };
  const body = JSON.stringify({ error: { message, code: -32600, data } });
  res.statusCode = httpStatus;
  res.setHeader("content-type", "application/json");
  res.end(body);
}

/**
 * The number of calls a tRPC request carries: the comma-separated procedure paths of a `?batch=1`
 * request, else 1. `url` is the request's path and query (`/trpc/a.b,c.d?batch=1&input=…`).
 */
export function batchCallCount(url: string): number {
  const query = url.indexOf("?");
  if (query < 0 || new URLSearchParams(url.slice(query + 1)).get("batch") !== "1") return 1;
  let path = url.slice(0, query);
  try {
    path = decodeURIComponent(path);
  } catch {
    // tRPC refuses the malformed path itself; count what is there
  }
  return path.split(",").length;
}

type Chunk = string | Uint8Array;
type Callback = (error?: Error | null) => void;

/**
 * Holds back an answer until it is complete so that one over `maxBytes` can still be refused with a
 * clean status: then `refuse(size)` writes the refusal instead (the held bytes are dropped as soon as
 * the limit is crossed, so at most `maxBytes` are held). tRPC answers (JSON, not streamed) are built
 * whole before they are written, so holding them back delays nothing.
 */
export function capResponseSize(res: ServerResponse, maxBytes: number, refuse: (size: number) => void): void {
  const write = res.write.bind(res) as (chunk: Chunk, cb?: Callback) => boolean;
  const end = res.end.bind(res) as (chunk?: Chunk, cb?: () => void) => ServerResponse;
  let held: Buffer[] = [];
  let size = 0;
  const add = (chunk: unknown, encoding: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === "function") return;
    const buffer =
      typeof chunk === "string"
        ? Buffer.from(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8")
        : Buffer.from(chunk as Uint8Array);
    size += buffer.length;
    if (size > maxBytes) held = [];
    else held.push(buffer);
  };
  const callbackOf = (...args: unknown[]) => args.find((a): a is Callback => typeof a === "function");
  let ended = false;
  res.write = ((chunk: unknown, encoding?: unknown, cb?: unknown) => {
    if (ended) return false;
    add(chunk, encoding);
    const done = callbackOf(encoding, cb);
    if (done) queueMicrotask(() => done());
    return true;
  }) as ServerResponse["write"];
  res.end = ((chunk?: unknown, encoding?: unknown, cb?: unknown) => {
    if (ended) return res;
    ended = true;
    add(chunk, encoding);
    const done = callbackOf(chunk, encoding, cb);
    res.write = write as ServerResponse["write"];
    res.end = end as ServerResponse["end"];
    if (size > maxBytes) {
      if (!res.headersSent) {
        for (const name of res.getHeaderNames()) res.removeHeader(name);
        refuse(size);
      } else res.destroy(); // cannot happen while everything is held back; never send a cut answer
      done?.();
      return res;
    }
    return end(Buffer.concat(held), done);
  }) as ServerResponse["end"];
}
