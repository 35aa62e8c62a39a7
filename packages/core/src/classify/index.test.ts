import { describe, expect, expectTypeOf, it } from "vitest";
import * as core from "../index.ts";
import type { ClientErrorAdapter } from "./adapter.ts";
import { classifyWith, createRegistry } from "./engine.ts";
import { AMBIGUOUS_CODES, CLIENT_ADAPTERS, type Classification, classifyError, NOT_SENT_CODES } from "./index.ts";

describe("the client adapter registry", () => {
  it("merges the tables as they were before the split (one file per client library)", () => {
    expect([...NOT_SENT_CODES].sort()).toEqual(
      [
        "ECONNREFUSED",
        "ENOTFOUND",
        "EAI_AGAIN",
        "UND_ERR_CONNECT_TIMEOUT",
        "ConnectionRefused",
        "ERR_TLS_CERT_ALTNAME_INVALID",
        "CERT_HAS_EXPIRED",
        "CERT_NOT_YET_VALID",
        "DEPTH_ZERO_SELF_SIGNED_CERT",
        "SELF_SIGNED_CERT_IN_CHAIN",
        "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
        "UNABLE_TO_GET_ISSUER_CERT",
        "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
        "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
        "CERT_SIGNATURE_FAILURE",
        "CERT_UNTRUSTED",
        "CERT_REJECTED",
        "CERT_REVOKED",
        "INVALID_CA",
        "HOSTNAME_MISMATCH",
      ].sort(),
    );
    expect(Object.fromEntries(AMBIGUOUS_CODES)).toEqual({
      UND_ERR_HEADERS_TIMEOUT: "READ_TIMEOUT",
      UND_ERR_BODY_TIMEOUT: "READ_TIMEOUT",
      UND_ERR_ABORTED: "READ_TIMEOUT",
      ABORT_ERR: "READ_TIMEOUT",
      ECONNABORTED: "READ_TIMEOUT",
      ETIMEDOUT: "READ_TIMEOUT",
      UND_ERR_SOCKET: "RESET_AFTER_WRITE",
      ECONNRESET: "RESET_AFTER_WRITE",
      EPIPE: "RESET_AFTER_WRITE",
      ConnectionClosed: "RESET_AFTER_WRITE",
      ERR_NETWORK: "AMBIGUOUS",
    });
    expect(CLIENT_ADAPTERS.map((a) => a.name)).toEqual([
      "node",
      "undici / fetch",
      "axios",
      "got / ky",
      "bun",
      "aws-sdk v3",
      "openai / @anthropic-ai/sdk",
      "stripe",
    ]);
  });

  it("refuses a code claimed by two adapters", () => {
    const twice: ClientErrorAdapter = { name: "twice", ambiguousCodes: { ECONNREFUSED: "AMBIGUOUS" } };
    expect(() => createRegistry([...CLIENT_ADAPTERS, twice])).toThrow(/ECONNREFUSED is claimed by node and twice/);
  });

  it("another client is one more adapter: its codes, shape rule and retry count take part", () => {
    const acme: ClientErrorAdapter = {
      name: "acme-http",
      notSentCodes: ["ACME_DIAL_FAILED"],
      classify: (link) =>
        link.name === "AcmeStallError" ? { kind: "ambiguous", code: "READ_TIMEOUT", label: "acme stall" } : undefined,
      retries: (link) => (link.acmeAttempt === 2 ? "acme retried once" : undefined),
    };
    const registry = createRegistry([...CLIENT_ADAPTERS, acme]);
    const dial = Object.assign(new Error("dial"), { code: "ACME_DIAL_FAILED" });
    expect(classifyWith(registry, dial, {})).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "NOT_SENT" });
    expect(classifyError(dial)).toMatchObject({ outcome: "UNKNOWN", code: "AMBIGUOUS" });
    const stall = Object.assign(new Error("stall"), { name: "AcmeStallError" });
    expect(classifyWith(registry, stall, {})).toMatchObject({ outcome: "UNKNOWN", code: "READ_TIMEOUT" });
    const redial = Object.assign(new Error("dial"), { code: "ACME_DIAL_FAILED", acmeAttempt: 2 });
    expect(classifyWith(registry, redial, {}).message).toContain("acme retried once");
  });

  it("@tristate/core still exports the classification API from its root", () => {
    expect(core.classifyError).toBe(classifyError);
    expect(core.NOT_SENT_CODES).toBe(NOT_SENT_CODES);
    expect(core.AMBIGUOUS_CODES).toBe(AMBIGUOUS_CODES);
    expect(typeof core.classifyInvokeFailure).toBe("function");
    expectTypeOf<core.Classification>().toEqualTypeOf<Classification>();
    expectTypeOf<core.ClassifyOptions>().toEqualTypeOf<{ noEffectStatuses?: readonly number[] }>();
  });
});
