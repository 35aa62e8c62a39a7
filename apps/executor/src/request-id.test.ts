import type { IncomingMessage, ServerResponse } from "node:http";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.ts";
import { currentRequestId, requestIdOf, withRequestId } from "./request-id.ts";

const req = (id?: string | string[]) =>
  ({ headers: id === undefined ? {} : { "x-request-id": id } }) as IncomingMessage;

describe("request ids", () => {
  it("keeps a valid caller id, trimmed; replaces a missing, repeated, empty or over-long one", () => {
    expect(requestIdOf(req(" abc-1 "))).toBe("abc-1");
    for (const bad of [undefined, ["a", "b"], "", "   ", "x".repeat(201), "tab\there"]) {
      expect(requestIdOf(req(bad))).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it("every log line written while a request is served carries its id, after awaits too", async () => {
    const lines: { request_id?: string; msg: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _e, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    });
    const logger = createLogger("info", sink);
    const headers: Record<string, string> = {};
    const res = { setHeader: (n: string, v: string) => (headers[n] = v) } as unknown as ServerResponse;
    let served: Promise<void> = Promise.resolve();
    withRequestId(req("req-7"), res, () => {
      served = (async () => {
        await new Promise((r) => setTimeout(r, 5));
        logger.warn("inside");
      })();
    });
    await served;
    logger.info("outside");
    expect(headers["x-request-id"]).toBe("req-7");
    expect(lines).toEqual([
      expect.objectContaining({ msg: "inside", request_id: "req-7" }),
      expect.not.objectContaining({ request_id: expect.anything() }),
    ]);
    expect(currentRequestId()).toBeUndefined();
  });
});
