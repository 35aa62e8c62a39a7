import { describe, expect, it } from "vitest";
import { bun } from "./bun.ts";
import { classifyError } from "./index.ts";

// Bun is not installed in this workspace: the errors are built as Bun's fetch builds them.
// oven-sh/bun `src/bun.js/webcore/response.zig` (`FetchTasklet.onReject`; later
// `src/bun.js/webcore/fetch/FetchTasklet.zig`) rejects with a `SystemError{ code = @errorName(fail),
// message, path = url }` turned into an Error instance; newer versions spell ConnectionClosed's code
// "ECONNRESET". A timeout or abort rejects with a DOMException (`AbortSignal.createTimeoutError`).

const url = "http://127.0.0.1:9/charges";

/** A Bun `SystemError` as its fetch rejects with it: name "Error", `code`, `path`, `errno` 0. */
function systemError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code, path: url, errno: 0 });
}

const MESSAGES = {
  ConnectionRefused: "Unable to connect. Is the computer able to access the url?",
  ConnectionClosed:
    "The socket connection was closed unexpectedly. For more information, pass `verbose: true` in the second argument to fetch()",
  FailedToOpenSocket: "Was there a typo in the url or port?",
};

describe(`${bun.name} adapter: Bun fetch's error shapes`, () => {
  it("ConnectionRefused → FAILED_NO_EFFECT NOT_SENT", () => {
    const error = systemError("ConnectionRefused", MESSAGES.ConnectionRefused);
    expect(classifyError(error)).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "NOT_SENT" });
  });

  it("ConnectionClosed (older Bun) and ECONNRESET (newer Bun) → UNKNOWN RESET_AFTER_WRITE", () => {
    for (const code of ["ConnectionClosed", "ECONNRESET"]) {
      expect(classifyError(systemError(code, MESSAGES.ConnectionClosed))).toMatchObject({
        outcome: "UNKNOWN",
        code: "RESET_AFTER_WRITE",
      });
    }
  });

  it("the socket-closed message with no code, and under an unrecognised code, → UNKNOWN RESET_AFTER_WRITE", () => {
    expect(classifyError(new Error(MESSAGES.ConnectionClosed))).toMatchObject({
      outcome: "UNKNOWN",
      code: "RESET_AFTER_WRITE",
    });
    expect(classifyError(systemError("SomethingNew", MESSAGES.ConnectionClosed))).toMatchObject({
      outcome: "UNKNOWN",
      code: "RESET_AFTER_WRITE",
    });
  });

  it("FailedToOpenSocket and other codes Bun's adapter does not claim → UNKNOWN AMBIGUOUS", () => {
    expect(classifyError(systemError("FailedToOpenSocket", MESSAGES.FailedToOpenSocket))).toMatchObject({
      outcome: "UNKNOWN",
      code: "AMBIGUOUS",
    });
  });

  it("a fetch timeout without reason (DOMException TimeoutError 'The operation timed out') → UNKNOWN READ_TIMEOUT", () => {
    const error = new DOMException("The operation timed out", "TimeoutError");
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "READ_TIMEOUT" });
  });
});
