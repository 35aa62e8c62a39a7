import { describe, expect, it } from "vitest";
import { classifyInvokeFailure } from "../classify-invoke.ts";
import { AmbiguousError, DeadlineExceededError, NotSentError, RejectedError } from "../errors.ts";
import { classifyHttpStatus, parseRetryAfterMs } from "../http-status.ts";
import type { ReasonCode } from "../statuses.ts";
import { type Classification, classifyError } from "./index.ts";

const withCode = (code: string, message = "x") => Object.assign(new Error(message), { code });
const fetchFailed = (cause: unknown) => new TypeError("fetch failed", { cause });
const withCodeAs = <E extends Error>(error: E, code: string): E => Object.assign(error, { code });

type Row = [label: string, error: unknown, outcome: Classification["outcome"], code: ReasonCode];

describe("field-t09-fetch-failed-hides-cause", () => {
  // The T09 table: status FAILED_NO_EFFECT ⇔ retry_safe true, UNKNOWN ⇔ retry_safe false.
  const rows: Row[] = [
    [
      "fetch failed, cause ECONNREFUSED (plain object)",
      fetchFailed({ code: "ECONNREFUSED" }),
      "FAILED_NO_EFFECT",
      "NOT_SENT",
    ],
    ["fetch failed, cause ECONNREFUSED (Error)", fetchFailed(withCode("ECONNREFUSED")), "FAILED_NO_EFFECT", "NOT_SENT"],
    ["fetch failed, cause ENOTFOUND", fetchFailed(withCode("ENOTFOUND")), "FAILED_NO_EFFECT", "NOT_SENT"],
    ["fetch failed, cause EAI_AGAIN", fetchFailed(withCode("EAI_AGAIN")), "FAILED_NO_EFFECT", "NOT_SENT"],
    [
      "fetch failed, cause UND_ERR_CONNECT_TIMEOUT",
      fetchFailed(withCode("UND_ERR_CONNECT_TIMEOUT")),
      "FAILED_NO_EFFECT",
      "NOT_SENT",
    ],
    [
      "fetch failed, cause ERR_TLS_CERT_ALTNAME_INVALID",
      fetchFailed(withCode("ERR_TLS_CERT_ALTNAME_INVALID")),
      "FAILED_NO_EFFECT",
      "NOT_SENT",
    ],
    ["fetch failed, cause CERT_HAS_EXPIRED", fetchFailed(withCode("CERT_HAS_EXPIRED")), "FAILED_NO_EFFECT", "NOT_SENT"],
    [
      "fetch failed, cause DEPTH_ZERO_SELF_SIGNED_CERT",
      fetchFailed(withCode("DEPTH_ZERO_SELF_SIGNED_CERT")),
      "FAILED_NO_EFFECT",
      "NOT_SENT",
    ],
    [
      "fetch failed, cause UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      fetchFailed(withCode("UNABLE_TO_VERIFY_LEAF_SIGNATURE")),
      "FAILED_NO_EFFECT",
      "NOT_SENT",
    ],
    [
      "fetch failed, cause SELF_SIGNED_CERT_IN_CHAIN",
      fetchFailed(withCode("SELF_SIGNED_CERT_IN_CHAIN")),
      "FAILED_NO_EFFECT",
      "NOT_SENT",
    ],
    [
      "Node happy-eyeballs AggregateError ECONNREFUSED",
      fetchFailed(
        Object.assign(new AggregateError([withCode("ECONNREFUSED"), withCode("ECONNREFUSED")], ""), {
          code: "ECONNREFUSED",
        }),
      ),
      "FAILED_NO_EFFECT",
      "NOT_SENT",
    ],
    ["Bun ConnectionRefused", withCode("ConnectionRefused", "Unable to connect"), "FAILED_NO_EFFECT", "NOT_SENT"],
    [
      "fetch failed, cause UND_ERR_HEADERS_TIMEOUT",
      fetchFailed(withCode("UND_ERR_HEADERS_TIMEOUT")),
      "UNKNOWN",
      "READ_TIMEOUT",
    ],
    [
      "fetch failed, cause UND_ERR_BODY_TIMEOUT",
      fetchFailed(withCode("UND_ERR_BODY_TIMEOUT")),
      "UNKNOWN",
      "READ_TIMEOUT",
    ],
    [
      "fetch failed, cause UND_ERR_SOCKET (other side closed)",
      fetchFailed(withCode("UND_ERR_SOCKET", "other side closed")),
      "UNKNOWN",
      "RESET_AFTER_WRITE",
    ],
    ["fetch failed, cause ECONNRESET", fetchFailed(withCode("ECONNRESET")), "UNKNOWN", "RESET_AFTER_WRITE"],
    ["fetch failed, cause EPIPE", fetchFailed(withCode("EPIPE")), "UNKNOWN", "RESET_AFTER_WRITE"],
    ["bare ECONNRESET", withCode("ECONNRESET"), "UNKNOWN", "RESET_AFTER_WRITE"],
    [
      "DOMException AbortError",
      new DOMException("This operation was aborted", "AbortError"),
      "UNKNOWN",
      "READ_TIMEOUT",
    ],
    [
      "DOMException TimeoutError",
      new DOMException("The operation was aborted due to timeout", "TimeoutError"),
      "UNKNOWN",
      "READ_TIMEOUT",
    ],
    [
      "fetch wrapping a TimeoutError (AbortSignal.timeout)",
      fetchFailed(new DOMException("timeout", "TimeoutError")),
      "UNKNOWN",
      "READ_TIMEOUT",
    ],
    [
      "Bun: message only, no code, no cause",
      new Error("The socket connection was closed unexpectedly. For more information, pass `verbose: true`"),
      "UNKNOWN",
      "RESET_AFTER_WRITE",
    ],
    [
      "axios ECONNABORTED (timeout)",
      { isAxiosError: true, name: "AxiosError", code: "ECONNABORTED", message: "timeout of 1000ms exceeded" },
      "UNKNOWN",
      "READ_TIMEOUT",
    ],
    [
      "axios ERR_NETWORK, no cause",
      { isAxiosError: true, name: "AxiosError", code: "ERR_NETWORK", message: "Network Error" },
      "UNKNOWN",
      "AMBIGUOUS",
    ],
    [
      "axios ECONNREFUSED (code copied, cause kept)",
      { isAxiosError: true, name: "AxiosError", code: "ECONNREFUSED", cause: withCode("ECONNREFUSED") },
      "FAILED_NO_EFFECT",
      "NOT_SENT",
    ],
    ["fetch failed with no cause", new TypeError("fetch failed"), "UNKNOWN", "AMBIGUOUS"],
    ["unrecognised code", withCode("ETIMEDOUT_SOMETHING"), "UNKNOWN", "AMBIGUOUS"],
    [
      "unrecognised wrapper code around ECONNREFUSED (a retrying client may have sent earlier attempts)",
      Object.assign(new Error("gave up after 3 attempts", { cause: withCode("ECONNREFUSED") }), {
        code: "ERR_RETRIES",
      }),
      "UNKNOWN",
      "AMBIGUOUS",
    ],
    [
      "a reset anywhere in the chain beats a refused connection",
      fetchFailed(Object.assign(withCode("ECONNREFUSED"), { cause: withCode("ECONNRESET") })),
      "UNKNOWN",
      "RESET_AFTER_WRITE",
    ],
    ["plain string", "boom", "UNKNOWN", "AMBIGUOUS"],
    ["undefined", undefined, "UNKNOWN", "AMBIGUOUS"],
    ["null", null, "UNKNOWN", "AMBIGUOUS"],
    ["a number", 42, "UNKNOWN", "AMBIGUOUS"],
  ];

  it.each(rows)("%s", (_label, error, outcome, code) => {
    const c = classifyError(error);
    expect(c.outcome).toBe(outcome);
    expect(c.code).toBe(code);
    expect(typeof c.message).toBe("string");
  });

  it("survives cause cycles", () => {
    const a: Error & { cause?: unknown } = new Error("a");
    const b = new Error("b", { cause: a });
    a.cause = b;
    expect(classifyError(a)).toMatchObject({ outcome: "UNKNOWN", code: "AMBIGUOUS" });
  });

  it("the message names the hidden cause", () => {
    expect(classifyError(fetchFailed(withCode("UND_ERR_HEADERS_TIMEOUT"))).message).toContain(
      "UND_ERR_HEADERS_TIMEOUT",
    );
  });
});

describe("classifyError: Tristate's typed errors first", () => {
  it("NotSentError keeps its code", () => {
    expect(classifyError(new NotSentError("x"))).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "NOT_SENT" });
    expect(classifyError(new NotSentError("x", { code: "DEADLINE_EXCEEDED" }))).toMatchObject({
      outcome: "FAILED_NO_EFFECT",
      code: "DEADLINE_EXCEEDED",
    });
  });

  it("RejectedError carries status and Retry-After", () => {
    expect(classifyError(new RejectedError("x", { httpStatus: 429, retryAfterMs: 1000 }))).toMatchObject({
      outcome: "FAILED_NO_EFFECT",
      code: "REJECTED",
      httpStatus: 429,
      retryAfterMs: 1000,
    });
  });

  it("DeadlineExceededError", () => {
    expect(classifyError(new DeadlineExceededError("x", { remainingMs: 10, requiredMs: 1000 }))).toMatchObject({
      outcome: "FAILED_NO_EFFECT",
      code: "DEADLINE_EXCEEDED",
    });
  });

  it("AmbiguousError keeps its code even when its cause looks harmless", () => {
    const error = new AmbiguousError("x", { code: "GATEWAY_5XX", httpStatus: 504, cause: withCode("ECONNREFUSED") });
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "GATEWAY_5XX", httpStatus: 504 });
  });

  it("a typed error wrapped by another error is found through the cause chain", () => {
    expect(classifyError(new Error("wrapped", { cause: new NotSentError("x") }))).toMatchObject({
      outcome: "FAILED_NO_EFFECT",
      code: "NOT_SENT",
    });
  });

  it("a NotSentError under a reset is still UNKNOWN", () => {
    const error = Object.assign(new Error("reset", { cause: new NotSentError("x") }), { code: "ECONNRESET" });
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "RESET_AFTER_WRITE" });
  });

  it("HTTP-client errors with a response status use classifyHttpStatus", () => {
    const axios422 = { isAxiosError: true, code: "ERR_BAD_REQUEST", response: { status: 422 } };
    expect(classifyError(axios422)).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "REJECTED", httpStatus: 422 });
    const ky504 = Object.assign(new Error("Request failed"), { name: "HTTPError", response: { status: 504 } });
    expect(classifyError(ky504)).toMatchObject({ outcome: "UNKNOWN", code: "GATEWAY_5XX", httpStatus: 504 });
    const axios429 = { isAxiosError: true, response: { status: 429 } };
    expect(classifyError(axios429, { noEffectStatuses: [429] })).toMatchObject({ outcome: "FAILED_NO_EFFECT" });
  });
});

describe("classifyHttpStatus", () => {
  it.each([200, 201, 202, 204, 299])("%i → ok", (status) => {
    expect(classifyHttpStatus(status).kind).toBe("ok");
  });

  it.each([400, 401, 403, 404, 405, 410, 413, 415, 422, 425, 429, 451])("%i → rejected", (status) => {
    expect(classifyHttpStatus(status)).toMatchObject({ kind: "rejected", code: "REJECTED" });
  });

  it.each([
    [408, "AMBIGUOUS"],
    [409, "IN_FLIGHT"],
    [500, "AMBIGUOUS"],
    [501, "AMBIGUOUS"],
    [502, "GATEWAY_5XX"],
    [503, "GATEWAY_5XX"],
    [504, "GATEWAY_5XX"],
    [507, "AMBIGUOUS"],
    [100, "AMBIGUOUS"],
    [301, "AMBIGUOUS"],
    [303, "AMBIGUOUS"],
  ] as const)("%i → ambiguous %s", (status, code) => {
    expect(classifyHttpStatus(status)).toMatchObject({ kind: "ambiguous", code });
  });

  it("noEffectStatuses (field case T05 declares 408 and 429) turn a status into rejected", () => {
    const options = { noEffectStatuses: [408, 429] };
    expect(classifyHttpStatus(408, options).kind).toBe("rejected");
    expect(classifyHttpStatus(429, options).kind).toBe("rejected");
    expect(classifyHttpStatus(504, options).kind).toBe("ambiguous");
    expect(classifyHttpStatus(200, { noEffectStatuses: [200] }).kind).toBe("ok");
  });

  it("207 Multi-Status is never a plain success (RFC 4918 §13): ambiguous PARTIAL_EFFECT, even if declared", () => {
    expect(classifyHttpStatus(207)).toMatchObject({ kind: "ambiguous", code: "PARTIAL_EFFECT" });
    expect(classifyHttpStatus(207).reason).toContain("RFC 4918");
    expect(classifyHttpStatus(207, { noEffectStatuses: [207] }).kind).toBe("ambiguous");
    // A client error carrying a 207 (an HTTP client configured to throw on it) is UNKNOWN too.
    const axios207 = Object.assign(new Error("multi"), { isAxiosError: true, response: { status: 207 } });
    expect(classifyError(axios207)).toMatchObject({ outcome: "UNKNOWN", code: "PARTIAL_EFFECT", httpStatus: 207 });
  });
});

describe("classifyError: an error that says its client retried is never FAILED_NO_EFFECT (rule 11, issue 9 §3)", () => {
  // Shapes from the clients' sources: axios-retry `src/index.ts` keeps its state in
  // `config["axios-retry"]` and increments `retryCount` before each retry; got `source/core/index.ts`
  // gives each retry a new `Request` with `retryCount + 1`, and `RequestError` holds it in a
  // non-enumerable `request`; smithy `retryMiddleware.ts` sets `$metadata.attempts = attempts + 1`
  // on the error it finally throws.
  const axiosError = (retryCount: number, extra: Record<string, unknown> = {}) =>
    Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), {
      name: "AxiosError",
      isAxiosError: true,
      code: "ECONNREFUSED",
      config: { method: "post", url: "http://127.0.0.1:9/charges", "axios-retry": { retries: 3, retryCount } },
      ...extra,
    });
  const gotError = (name: string, code: string | undefined, retryCount: number, response?: unknown) => {
    const error = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { name, code });
    Object.defineProperty(error, "request", { enumerable: false, value: { retryCount, options: {} } });
    Object.defineProperty(error, "response", { enumerable: false, value: response });
    return error;
  };
  const awsError = (attempts: number, extra: Record<string, unknown> = {}) =>
    Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), {
      code: "ECONNREFUSED",
      $metadata: { attempts, totalRetryDelay: 150 },
      ...extra,
    });

  it("axios-retry: retryCount 2 with a final ECONNREFUSED → UNKNOWN; retryCount 0 → NOT_SENT", () => {
    expect(classifyError(axiosError(2))).toMatchObject({ outcome: "UNKNOWN", code: "AMBIGUOUS" });
    expect(classifyError(axiosError(2)).message).toContain("axios-retry retried 2 time(s)");
    expect(classifyError(axiosError(0))).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "NOT_SENT" });
  });

  it("axios-retry: a final 422 after retries → UNKNOWN, keeping the status", () => {
    const error = axiosError(1, { code: "ERR_BAD_REQUEST", response: { status: 422 } });
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "AMBIGUOUS", httpStatus: 422 });
    const once = axiosError(0, { code: "ERR_BAD_REQUEST", response: { status: 422 } });
    expect(classifyError(once)).toMatchObject({ outcome: "FAILED_NO_EFFECT", httpStatus: 422 });
  });

  it("got: RequestError with request.retryCount 2 → UNKNOWN; retryCount 0 → NOT_SENT", () => {
    expect(classifyError(gotError("RequestError", "ECONNREFUSED", 2))).toMatchObject({ outcome: "UNKNOWN" });
    expect(classifyError(gotError("RequestError", "ECONNREFUSED", 0))).toMatchObject({
      outcome: "FAILED_NO_EFFECT",
      code: "NOT_SENT",
    });
  });

  it("got: HTTPError 400 whose response says retryCount 1 → UNKNOWN with httpStatus 400", () => {
    const error = gotError("HTTPError", "ERR_NON_2XX_3XX_RESPONSE", 1, { statusCode: 400, retryCount: 1 });
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", httpStatus: 400 });
    const first = gotError("HTTPError", "ERR_NON_2XX_3XX_RESPONSE", 0, { statusCode: 400, retryCount: 0 });
    expect(classifyError(first)).toMatchObject({ outcome: "FAILED_NO_EFFECT", httpStatus: 400 });
  });

  it("AWS SDK v3: $metadata.attempts 3 → UNKNOWN; attempts 1 → NOT_SENT", () => {
    expect(classifyError(awsError(3))).toMatchObject({ outcome: "UNKNOWN", code: "AMBIGUOUS" });
    expect(classifyError(awsError(3)).message).toContain("3 attempts");
    expect(classifyError(awsError(1))).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "NOT_SENT" });
  });

  it("the retry statement counts on any link of the cause chain, and overrides a typed NotSentError", () => {
    expect(classifyError(new Error("wrapped", { cause: awsError(2) })).outcome).toBe("UNKNOWN");
    expect(classifyError(new NotSentError("sdk gave up", { cause: axiosError(3) })).outcome).toBe("UNKNOWN");
    expect(classifyError(new NotSentError("sdk gave up", { cause: axiosError(0) })).outcome).toBe("FAILED_NO_EFFECT");
  });

  it("a throwing getter on a retry field proves nothing and never makes classifyError throw", () => {
    const error = withCode("ECONNREFUSED");
    Object.defineProperty(error, "config", {
      get() {
        throw new Error("boom");
      },
    });
    expect(classifyError(error)).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "NOT_SENT" });
  });
});

describe("classifyInvokeFailure (rule 11: the whole invoke, not its last attempt)", () => {
  const refused = () => fetchFailed(withCode("ECONNREFUSED"));

  it("a not-sent last error after an earlier write of the same invoke → UNKNOWN AMBIGUOUS", () => {
    const c = classifyInvokeFailure({ error: refused(), written: true, ioStarted: true, writtenRequests: 1 });
    expect(c).toMatchObject({ outcome: "UNKNOWN", code: "AMBIGUOUS" });
    expect(c.message).toContain("earlier request of the same invoke was written");
    expect(classifyInvokeFailure({ error: refused(), written: false, ioStarted: true, writtenRequests: 0 })).toEqual(
      classifyError(refused()),
    );
  });

  it("NotSentError / DeadlineExceededError after a write → UNKNOWN", () => {
    for (const error of [
      new NotSentError("no", { code: "DEADLINE_EXCEEDED" }),
      new DeadlineExceededError("late", { remainingMs: 0, requiredMs: 1 }),
    ]) {
      expect(classifyInvokeFailure({ error, written: true, ioStarted: true, writtenRequests: 1 }).outcome).toBe(
        "UNKNOWN",
      );
    }
  });

  it("a refusal of the only written request stands; with an earlier written request (or an unknown count) it is UNKNOWN", () => {
    const rejected = new RejectedError("no", { httpStatus: 422 });
    expect(
      classifyInvokeFailure({ error: rejected, written: true, ioStarted: true, writtenRequests: 1 }),
    ).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "REJECTED", httpStatus: 422 });
    expect(
      classifyInvokeFailure({ error: rejected, written: true, ioStarted: true, writtenRequests: 2 }),
    ).toMatchObject({ outcome: "UNKNOWN", code: "AMBIGUOUS", httpStatus: 422 });
    expect(classifyInvokeFailure({ error: rejected, written: true, ioStarted: true })).toMatchObject({
      outcome: "UNKNOWN",
    });
    const axios404 = Object.assign(new Error("nf"), { isAxiosError: true, response: { status: 404 } });
    expect(classifyInvokeFailure({ error: axios404, written: true, ioStarted: true, writtenRequests: 1 }).outcome).toBe(
      "FAILED_NO_EFFECT",
    );
    // A not-sent error is no answer: one written request is then an earlier one.
    expect(
      classifyInvokeFailure({ error: refused(), written: true, ioStarted: true, writtenRequests: 1 }).outcome,
    ).toBe("UNKNOWN");
  });

  it.each([
    ["TypeError", () => new TypeError("Cannot read properties of undefined (reading 'id')")],
    ["RangeError", () => new RangeError("Invalid array length")],
    ["ReferenceError", () => new ReferenceError("orderId is not defined")],
    ["SyntaxError", () => new SyntaxError("Unexpected token } in JSON")],
    ["node's ERR_INVALID_URL TypeError", () => withCodeAs(new TypeError("Invalid URL"), "ERR_INVALID_URL")],
    ["a ZodError-like error", () => Object.assign(new Error("[]"), { name: "ZodError", issues: [] })],
  ])("%s before any I/O → FAILED_NO_EFFECT TOOL_ERROR_NOT_SENT naming the error", (_label, make) => {
    const error = make();
    const c = classifyInvokeFailure({ error, written: false, ioStarted: false, writtenRequests: 0 });
    expect(c).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "TOOL_ERROR_NOT_SENT" });
    expect(c.message).toContain(error.message);
    expect(c.message).toContain(error.name);
  });

  it("the same errors once I/O started (or something was written) are not TOOL_ERROR_NOT_SENT", () => {
    const error = new TypeError("x is not a function");
    expect(classifyInvokeFailure({ error, written: false, ioStarted: true, writtenRequests: 0 })).toMatchObject({
      outcome: "UNKNOWN",
      code: "AMBIGUOUS",
    });
    expect(classifyInvokeFailure({ error, written: true, ioStarted: true, writtenRequests: 1 }).outcome).toBe(
      "UNKNOWN",
    );
  });

  it("no I/O seen, but not provably the tool's code → as classifyError says (UNKNOWN)", () => {
    const none = { written: false, ioStarted: false, writtenRequests: 0 };
    for (const error of [
      new Error("boom"), // not a built-in programming error
      fetchFailed(withCode("ECONNRESET")), // a TypeError whose cause is a transport error
      withCodeAs(new TypeError("x"), "ECONNRESET"),
      new AmbiguousError("maybe"),
      Object.assign(new Error("x"), { name: "ZodError" }), // no issues: not ZodError-like
      "a string",
    ]) {
      expect(classifyInvokeFailure({ error, ...none })).toMatchObject({ outcome: "UNKNOWN" });
    }
    // fetch failed / ECONNREFUSED that the tracker never saw: the client works outside the invoke's
    // context (a shared queue or pool), so its earlier attempts may have been written → UNKNOWN.
    expect(classifyInvokeFailure({ error: refused(), ...none })).toMatchObject({
      outcome: "UNKNOWN",
      code: "AMBIGUOUS",
    });
    // Seen by the tracker (I/O started, nothing written): the refusal is what it says, NOT_SENT.
    expect(
      classifyInvokeFailure({ error: refused(), written: false, ioStarted: true, writtenRequests: 0 }),
    ).toMatchObject({
      outcome: "FAILED_NO_EFFECT",
      code: "NOT_SENT",
    });
  });
});

describe("parseRetryAfterMs", () => {
  it("delay-seconds and HTTP-date (RFC 9110 §10.2.3)", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfterMs("1", now)).toBe(1000);
    expect(parseRetryAfterMs(" 120 ", now)).toBe(120_000);
    expect(parseRetryAfterMs("Thu, 01 Jan 2026 00:00:05 GMT", now)).toBe(5000);
    expect(parseRetryAfterMs("Wed, 31 Dec 2025 23:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfterMs(undefined, now)).toBeUndefined();
    expect(parseRetryAfterMs("-1", now)).toBeUndefined();
    expect(parseRetryAfterMs("soon", now)).toBeUndefined();
  });
});
