import { randomUUID } from "node:crypto";
import { REQUEST_ID_HEADER } from "../lib/request-id";

/** A request id the executor keeps (it echoes 1–200 printable ASCII characters and replaces others). */
const VALID_ID = /^[\x20-\x7e]{1,200}$/;

/**
 * The request id to send the executor for a browser's request: the browser's own `X-Request-Id`
 * when valid, else a new UUID — made here, so even an answer the executor never gave (502/504) has one.
 */
export function requestIdFor(headers: Headers): string {
  const given = headers.get(REQUEST_ID_HEADER)?.trim();
  return given && VALID_ID.test(given) ? given : randomUUID();
}
