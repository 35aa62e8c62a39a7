/**
 * Issue 21 §2: an error whose cause chain comes from a retrying SDK is never read as "not sent" from
 * the error alone. The real OpenAI, Anthropic, Stripe and ky clients, with their retries on, against
 * a loopback origin that refuses every connection: each throws an error whose last cause is
 * ECONNREFUSED (alone: "not sent"), but the SDK may have written earlier attempts (against a remote
 * that was up for the first one). The adapters stainless.ts, stripe.ts and got.ts (ky) say so.
 */
import Anthropic from "@anthropic-ai/sdk";
import ky from "ky";
import OpenAI from "openai";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { classifyWith, createRegistry } from "./engine.ts";
import { closedOrigin, rejection } from "./fixtures.ts";
import { CLIENT_ADAPTERS, classifyError } from "./index.ts";

/** The registry as it was before issue 21 §2 (without the SDK adapters): what the error alone said then. */
const before = createRegistry(
  CLIENT_ADAPTERS.filter((a) => a.name !== "openai / @anthropic-ai/sdk" && a.name !== "stripe"),
);

const sdks: [name: string, fail: (origin: string) => Promise<unknown>, clause: RegExp][] = [
  [
    "OpenAI (maxRetries 1)",
    (origin) => new OpenAI({ apiKey: "sk-test", baseURL: origin, maxRetries: 1 }).post("/refunds", { body: {} }),
    /OpenAI\/Anthropic SDK retries connection errors/,
  ],
  [
    "Anthropic (maxRetries 1)",
    (origin) =>
      new Anthropic({ apiKey: "sk-ant-test", baseURL: origin, maxRetries: 1 }).post("/v1/refunds", { body: {} }),
    /OpenAI\/Anthropic SDK retries connection errors/,
  ],
  [
    "Stripe (maxNetworkRetries 1)",
    (origin) => {
      const url = new URL(origin);
      return new Stripe("sk_test_x", {
        host: url.hostname,
        port: Number(url.port),
        protocol: "http",
        maxNetworkRetries: 1,
      }).refunds.create({ charge: "ch_1" });
    },
    /Stripe SDK retries connection errors/,
  ],
  [
    "ky (retry on POST)",
    (origin) => ky.post(`${origin}/refunds`, { json: {}, retry: { limit: 1, methods: ["post"], backoffLimit: 1 } }),
    /ky retries network errors/,
  ],
];

describe("a retrying SDK's connection error is never NOT_SENT from the error alone (issue 21 §2)", () => {
  it.each(sdks)("%s: UNKNOWN, the message says the SDK retries", async (_name, fail, clause) => {
    const error = await rejection(fail(await closedOrigin()));
    const c = classifyError(error);
    expect(c.outcome).toBe("UNKNOWN");
    // The SDK's own retries are named wherever the chain would otherwise prove "not sent"; Stripe's
    // error keeps no cause today (AMBIGUOUS already): its adapter still names the retries.
    const adapter = CLIENT_ADAPTERS.find((a) => a.retries?.(error as Record<PropertyKey, unknown>) !== undefined);
    expect(adapter?.retries?.(error as Record<PropertyKey, unknown>)).toMatch(clause);
  });

  it("OpenAI, Anthropic and ky read NOT_SENT without their rules (the regression these rules fix)", async () => {
    const origin = await closedOrigin();
    for (const [, fail] of sdks.filter(([name]) => !name.startsWith("Stripe"))) {
      const error = await rejection(fail(origin));
      const registry =
        fail === sdks[3]?.[1] ? createRegistry(CLIENT_ADAPTERS.filter((a) => a.name !== "got / ky")) : before;
      expect(classifyWith(registry, error, {})).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "NOT_SENT" });
    }
  });
});
