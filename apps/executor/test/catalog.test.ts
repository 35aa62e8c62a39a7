import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type AnyTool, createExecutor, Deadline, MemoryIntentStore } from "@tristate/core";
import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { buildCatalog, CatalogError, loadCatalog } from "../src/catalog/load.ts";
import { readEnv } from "../src/env.ts";

const REPO_ROOT = resolve(import.meta.dirname, "../../..");
const DEFINE_CATALOG = resolve(import.meta.dirname, "../src/catalog/define-catalog.ts");

let payments: FakeRemote;
let mail: FakeRemote;
let dir: string;
beforeAll(async () => {
  payments = await startFakeRemote({ honorsKey: true });
  mail = await startFakeRemote({ honorsKey: false });
  dir = await mkdtemp(join(tmpdir(), "tristate-catalog-"));
});
afterAll(async () => {
  await payments?.close();
  await mail?.close();
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  payments.probesFail = false;
});

const executorFor = (tools: AnyTool[]) =>
  createExecutor({ store: new MemoryIntentStore(), tools, probe: { attempts: 2, spacingMs: 0, timeoutMs: 2000 } });

let step = 0;
const call = (ex: ReturnType<typeof executorFor>, tool: string, args: Record<string, unknown>) =>
  ex.call({ runId: "run-catalog", stepId: `step-${++step}`, tool, args, deadline: Deadline.after(20_000) });

/** What the fake remote's `state` means: a probe's find is the effect only when it says so (issue 21 §5). */
const FAKE_REMOTE_STATE = { field: "state", done: ["succeeded"], failed: ["failed"], pending: ["processing"] };

/** A valid declarative refund tool against `url`; `over` replaces fields. */
function refundDecl(url: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: "issue_refund",
    kind: "idempotent_by_key",
    method: "POST",
    url: `${url}/effects`,
    args: {
      type: "object",
      properties: {
        order_id: { type: "string", minLength: 1 },
        amount: { type: ["number", "string"] },
        currency: { type: "string", minLength: 3, maxLength: 3 },
        reason: { type: "string" },
      },
      required: ["order_id", "amount", "currency"],
    },
    identity: { order_id: "upper", amount: "decimal:2" },
    timeoutMs: 1500,
    keyProbe: { url: `${url}/effects?clientRef={key}`, found: { type: "non_empty_array" }, state: FAKE_REMOTE_STATE },
    identityProbe: {
      url: `${url}/effects/search?order_id={order_id}&amount={amount}&since={since}`,
      found: { type: "non_empty_array" },
      state: FAKE_REMOTE_STATE,
    },
    ...over,
  };
}

const refundArgs = { order_id: "A-1182", amount: 49.9, currency: "EUR", reason: "arrived broken" };

describe("the example catalog (tristate.config.ts)", () => {
  it("loads with base URLs from the env and its tools work against fake remotes", async () => {
    const env = readEnv({ TRISTATE_PAYMENTS_URL: payments.url, TRISTATE_MAIL_URL: `${mail.url}/` });
    const tools = await loadCatalog(join(REPO_ROOT, "tristate.config.ts"), env);
    expect(tools.map((t) => t.name).sort()).toEqual(["issue_refund", "reverse_refund", "send_email"]);
    const refund = tools.find((t) => t.name === "issue_refund")!;
    expect(refund.kind).toBe("idempotent_by_key");
    expect(Object.keys(refund.identity)).toEqual(["order_id", "amount"]);
    expect(refund.probe && refund.probeByIdentity && refund.compensation?.tool).toBe("reverse_refund");
    expect(z.toJSONSchema(refund.args!, { io: "input" })).toMatchObject({
      type: "object",
      required: ["order_id", "amount", "currency"],
      properties: { order_id: { type: "string", minLength: 1 } },
    });

    const ex = executorFor(tools);
    const before = payments.effects.length;
    const env1 = await call(ex, "issue_refund", refundArgs);
    expect(env1).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect(env1.effect).toContain("refund of 49.9 EUR on order A-1182");
    expect(payments.effects.length).toBe(before + 1);
    expect(payments.keysSeen.at(-1)).toBe(env1.idempotency_key);
    expect(payments.bodiesSeen.at(-1)).toEqual(refundArgs);
    expect(refund.compensation!.args(refundArgs, { id: "fx_9" })).toEqual({ refund_id: "fx_9", order_id: "A-1182" });

    const mailEnv = await call(ex, "send_email", { to: "Ann@Example.com", template_id: "refund_done" });
    expect(mailEnv.status).toBe("SUCCEEDED");
    expect(mail.keysSeen).toEqual([]); // the mail service gets no Idempotency-Key header
    expect(mail.effects.at(-1)?.clientRef).toBe(mailEnv.idempotency_key);
  });

  it("a relative TRISTATE_CONFIG path resolves against the working directory", async () => {
    const cwd = process.cwd();
    try {
      process.chdir(REPO_ROOT);
      const tools = await loadCatalog("tristate.config.ts", readEnv({}));
      expect(tools).toHaveLength(3);
    } finally {
      process.chdir(cwd);
    }
  });
});

describe("declarative HTTP tools", () => {
  it("UNKNOWN after a 500 with the effect committed → the key probe finds it (resolution found)", async () => {
    const [tool] = await buildCatalog({ httpTools: [refundDecl(payments.url)] });
    const ex = executorFor([tool!]);
    payments.fault({ answer: 500 });
    const before = payments.effects.length;
    const env = await call(ex, "issue_refund", refundArgs);
    expect(env).toMatchObject({ status: "SUCCEEDED", resolution: "found" });
    expect(payments.effects.length).toBe(before + 1);
  });

  it("UNKNOWN with nothing committed → probes absent → resend with the same key (absent_resent)", async () => {
    const [tool] = await buildCatalog({ httpTools: [refundDecl(payments.url)] });
    const ex = executorFor([tool!]);
    payments.fault({ answer: 503, commit: false });
    const keysBefore = payments.keysSeen.length;
    const env = await call(ex, "issue_refund", { ...refundArgs, order_id: "B-7" });
    expect(env).toMatchObject({ status: "SUCCEEDED", resolution: "absent_resent", attempt: 2 });
    const keys = payments.keysSeen.slice(keysBefore);
    expect(keys).toEqual([env.idempotency_key, env.idempotency_key]);
    // The identity probe asked with the URL-encoded fields and the intent's time.
    const search = payments.requests.filter((r) => r.url.startsWith("/effects/search")).at(-1)!;
    expect(search.url).toMatch(/^\/effects\/search\?order_id=B-7&amount=49\.9&since=\d{13}$/);
  });

  it("a failing probe is no evidence: the record stays UNKNOWN and nothing is resent", async () => {
    const [tool] = await buildCatalog({ httpTools: [refundDecl(payments.url)] });
    const ex = executorFor([tool!]);
    payments.fault({ answer: 502, commit: false });
    payments.probesFail = true;
    const posts = payments.posts;
    const env = await call(ex, "issue_refund", { ...refundArgs, order_id: "C-1" });
    expect(env.status).toBe("UNKNOWN");
    expect(payments.posts).toBe(posts + 1);
  });

  it("URL templates URL-encode argument values; idempotencyHeader null / custom name; clientRefField; body none", async () => {
    const decl = (over: Record<string, unknown>) =>
      refundDecl(payments.url, {
        url: `${payments.url}/effects?order={order_id}`,
        keyProbe: undefined,
        identityProbe: undefined,
        ...over,
      });
    const tools = await buildCatalog({
      httpTools: [
        decl({ name: "no_header", idempotencyHeader: null, clientRefField: "clientRef" }),
        decl({ name: "custom_header", idempotencyHeader: "X-Request-Id", body: "none" }),
      ],
    });
    const ex = executorFor(tools);
    const keys = payments.keysSeen.length;
    const a = await call(ex, "no_header", { ...refundArgs, order_id: "A/1 2&x" });
    expect(a.status).toBe("SUCCEEDED");
    expect(payments.requests.at(-1)?.url).toBe("/effects?order=A%2F1%202%26x");
    expect(payments.keysSeen.length).toBe(keys);
    expect(payments.bodiesSeen.at(-1)).toEqual({ ...refundArgs, order_id: "A/1 2&x", clientRef: a.idempotency_key });
    expect(payments.effects.at(-1)?.clientRef).toBe(a.idempotency_key);

    const b = await call(ex, "custom_header", refundArgs);
    expect(b.status).toBe("SUCCEEDED");
    expect(payments.keysSeen.length).toBe(keys); // no Idempotency-Key header
    expect(payments.bodiesSeen.at(-1)).toEqual({});
  });

  it("found rules: status (404 → absent) and json_path_equals", async () => {
    const tools = await buildCatalog({
      httpTools: [
        refundDecl(payments.url, {
          name: "by_status",
          identityProbe: undefined,
          keyProbe: { url: `${payments.url}/nowhere/{key}`, found: { type: "status", found: [200], absent: [404] } },
        }),
        refundDecl(payments.url, {
          name: "by_json",
          identityProbe: undefined,
          keyProbe: {
            url: `${payments.url}/effects?clientRef={key}`,
            found: { type: "json_path_equals", path: "0.state", values: ["succeeded", "processing"] },
          },
        }),
      ],
    });
    const ex = executorFor(tools);
    const byStatus = tools[0]!;
    const ctx = { clientRef: "k-none", signal: new AbortController().signal, timeoutMs: 2000, sinceEpochMs: 0 };
    await expect(byStatus.probe!(refundArgs, ctx)).resolves.toBeNull();

    payments.fault({ answer: 500 });
    const env = await call(ex, "by_json", { ...refundArgs, order_id: "D-1" });
    expect(env).toMatchObject({ status: "SUCCEEDED", resolution: "found" });
    const byJson = tools[1]!;
    await expect(byJson.probe!(refundArgs, { ...ctx, clientRef: "nothing-here" })).resolves.toBeNull();
  });

  it("arguments are validated by the schema built from the JSON (list-of-fields form too)", async () => {
    const [tool] = await buildCatalog({
      httpTools: [
        {
          name: "ship",
          kind: "unsafe",
          method: "post",
          url: `${payments.url}/effects`,
          args: [
            { name: "order_id", type: "string" },
            { name: "qty", type: "integer", minimum: 1 },
            { name: "express", type: "boolean", required: false },
            { name: "carrier", type: "string", enum: ["dhl", "ups"], required: false },
          ],
          identity: { order_id: "trim" },
          timeoutMs: 1000,
        },
      ],
    });
    const ex = executorFor([tool!]);
    const bad = await call(ex, "ship", { order_id: "S-1", qty: 1.5 });
    expect(bad).toMatchObject({ status: "FAILED_NO_EFFECT", error: { code: "INVALID_ARGUMENTS", field: "qty" } });
    const badEnum = await call(ex, "ship", { order_id: "S-1", qty: 1, carrier: "fedex" });
    expect(badEnum.error).toMatchObject({ field: "carrier" });
    const ok = await call(ex, "ship", { order_id: "S-1", qty: 2, express: true, carrier: "dhl" });
    expect(ok.status).toBe("SUCCEEDED");
  });

  it("loads a .json catalog file, directly and through httpToolFiles", async () => {
    const file = join(dir, "tools.json");
    await writeFile(file, JSON.stringify({ httpTools: [refundDecl(payments.url)] }));
    expect((await loadCatalog(file)).map((t) => t.name)).toEqual(["issue_refund"]);
    await writeFile(join(dir, "list.json"), JSON.stringify([refundDecl(payments.url, { name: "refund_2" })]));
    const tools = await buildCatalog({ httpToolFiles: ["tools.json", "list.json"] }, dir);
    expect(tools.map((t) => t.name)).toEqual(["issue_refund", "refund_2"]);
  });

  it("a module with named exports and a function default export both load", async () => {
    const named = join(dir, "named.config.ts");
    await writeFile(
      named,
      `export const httpTools = [${JSON.stringify(refundDecl(payments.url))}];\nexport const tools = [];\n`,
    );
    expect((await loadCatalog(named)).map((t) => t.name)).toEqual(["issue_refund"]);
    const fn = join(dir, "fn.config.ts");
    await writeFile(
      fn,
      `import { defineCatalog } from ${JSON.stringify(DEFINE_CATALOG)};\nexport default defineCatalog((env) => ({ httpTools: [{ ...${JSON.stringify(refundDecl("http://x"))}, url: env.TRISTATE_PAYMENTS_URL + "/effects" }] }));\n`,
    );
    const [tool] = await loadCatalog(fn, readEnv({ TRISTATE_PAYMENTS_URL: payments.url }));
    const ex = executorFor([tool!]);
    expect((await call(ex, "issue_refund", { ...refundArgs, order_id: "F-1" })).status).toBe("SUCCEEDED");
  });
});

describe("invalid catalogs fail with the tool and the field named", () => {
  const fails = async (catalog: Parameters<typeof buildCatalog>[0], message: string) => {
    const error = await buildCatalog(catalog).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CatalogError);
    expect((error as Error).message).toBe(message);
  };
  const url = "http://127.0.0.1:1";

  it("unknown canonicaliser", () =>
    fails(
      { httpTools: [refundDecl(url, { identity: { order_id: "upper", amount: "decimal:x" } })] },
      'catalog: tool "issue_refund": identity.amount: unknown canonicaliser "decimal:x" (use upper, lower, trim, exact or decimal:<places 0-20>)',
    ));

  it("an unsafe tool resent on absence must declare its settle window (rule 5b)", async () => {
    await fails(
      { httpTools: [refundDecl(url, { kind: "unsafe", resendWhenAbsent: true })] },
      'catalog: tool "issue_refund": resendWhenAbsent: needs settleMs on an unsafe tool (absence proves nothing while the original may still land; rule 5b, docs/rules.md)',
    );
    await fails(
      { httpTools: [refundDecl(url, { kind: "unsafe", settleMs: -1 })] },
      'catalog: tool "issue_refund": settleMs: Too small: expected number to be >=0',
    );
    const [tool] = await buildCatalog({ httpTools: [refundDecl(url, { kind: "unsafe", settleMs: 5000 })] });
    expect(tool).toMatchObject({ settleMs: 5000, resendWhenAbsent: true });
  });

  it("missing and unknown fields, wrong kinds", async () => {
    await fails(
      { httpTools: [refundDecl(url, { timeoutMs: undefined })] },
      'catalog: tool "issue_refund": timeoutMs: is required',
    );
    await fails(
      { httpTools: [refundDecl(url, { timeout: 5 })] },
      'catalog: tool "issue_refund": timeout: unknown field; allowed fields: name, description, kind, method, url, ' +
        "args, identity, idempotencyHeader, body, clientRefField, headers, timeoutMs, keyRetentionMs, keyProbe, " +
        "identityProbe, compensation, irreversible, settleMs, resendWhenAbsent, loggableFields, secretFields, " +
        "noEffectStatuses, answers, describe",
    );
    await fails(
      { httpTools: [refundDecl(url, { kind: "risky" })] },
      'catalog: tool "issue_refund": kind: Invalid option: expected one of "read_only"|"idempotent_by_key"|"unsafe"',
    );
    await fails(
      { httpTools: [refundDecl(url, { keyProbe: { url: `${url}/x?k={key}`, found: { type: "truthy" } } })] },
      "catalog: tool \"issue_refund\": keyProbe.found.type: Invalid discriminator value. Expected 'non_empty_array' | 'status' | 'json_path_equals'",
    );
    await fails(
      { httpTools: [refundDecl(url, { args: [{ name: "order_id", type: "date" }] })] },
      'catalog: tool "issue_refund": args.0.type: must be "string", "number", "integer" or "boolean", or a list of them',
    );
    await fails({ httpTools: [{ kind: "unsafe" }] }, 'catalog: tool "#0": name: is required');
  });

  it("a probe's state (issue 21 §5): the error names the field and the rule", async () => {
    const probe = (state: unknown) => ({
      keyProbe: { url: `${url}/effects?clientRef={key}`, found: { type: "non_empty_array" }, state },
    });
    await fails(
      { httpTools: [refundDecl(url, probe({ field: "status", done: ["succeeded"], failed: ["succeeded"] }))] },
      'catalog: tool "issue_refund": keyProbe.state.failed.0: "succeeded" is also in done: a state has one meaning',
    );
    await fails(
      { httpTools: [refundDecl(url, probe({ field: "status", done: [] }))] },
      'catalog: tool "issue_refund": keyProbe.state.done: must be a non-empty list of strings, numbers or booleans',
    );
    await fails(
      { httpTools: [refundDecl(url, probe("done"))] },
      'catalog: tool "issue_refund": keyProbe.state: must be "always_done" or { field, done, failed?, pending? }',
    );
    await fails(
      { httpTools: [refundDecl(url, probe({ field: "status", done: ["ok"], canceled: ["x"] }))] },
      'catalog: tool "issue_refund": keyProbe.state.canceled: unknown field; allowed fields: field, done, failed, pending',
    );
  });

  it("duplicate names", () =>
    fails(
      { httpTools: [refundDecl(url), refundDecl(url)] },
      'catalog: tool "issue_refund": name: declared twice (httpTools.0 and httpTools.1)',
    ));

  it("compensation naming a missing tool, or referring to a field that is not an argument", async () => {
    await fails(
      { httpTools: [refundDecl(url, { compensation: { tool: "reverse_refund", args: { id: "{result.id}" } } })] },
      'catalog: tool "issue_refund": compensation.tool: "reverse_refund" is not in the catalog',
    );
    await fails(
      { httpTools: [refundDecl(url, { compensation: { tool: "issue_refund", args: { id: "{args.nope}" } } })] },
      'catalog: tool "issue_refund": compensation.args.id: {args.nope} must be {args.<argument field>} or {result.<path>}',
    );
  });

  it("URL templates naming fields that are not arguments, missing {key}/{since}, not absolute", async () => {
    await fails(
      { httpTools: [refundDecl(url, { url: `${url}/orders/{orderId}/refunds` })] },
      'catalog: tool "issue_refund": url: {orderId} is not an argument field (allowed: {order_id}, {amount}, {currency}, {reason}, {key})',
    );
    await fails(
      { httpTools: [refundDecl(url, { url: `${url}/orders/{reason}` })] },
      'catalog: tool "issue_refund": url: {reason} names an optional argument; it must be required',
    );
    await fails(
      { httpTools: [refundDecl(url, { keyProbe: { url: `${url}/effects`, found: { type: "non_empty_array" } } })] },
      'catalog: tool "issue_refund": keyProbe.url: must contain {key}',
    );
    await fails(
      {
        httpTools: [
          refundDecl(url, {
            identityProbe: { url: `${url}/effects/search?o={order_id}&k={key}`, found: { type: "non_empty_array" } },
          }),
        ],
      },
      'catalog: tool "issue_refund": identityProbe.url: {key} is not an argument field (allowed: {order_id}, {amount}, {currency}, {reason}, {since})',
    );
    await fails(
      { httpTools: [refundDecl(url, { url: "/effects" })] },
      'catalog: tool "issue_refund": url: must be an absolute http(s) URL template, got "/effects"',
    );
  });

  it("identity and loggable fields must be arguments", async () => {
    await fails(
      { httpTools: [refundDecl(url, { identity: { orderId: "upper" } })] },
      'catalog: tool "issue_refund": identity.orderId: is not an argument field',
    );
    await fails(
      { httpTools: [refundDecl(url, { identity: { reason: "trim" } })] },
      'catalog: tool "issue_refund": identity.reason: must be a required argument',
    );
    await fails(
      { httpTools: [refundDecl(url, { identity: {} })] },
      'catalog: tool "issue_refund": identity: must declare at least one field for a side-effecting tool',
    );
    await fails(
      { httpTools: [refundDecl(url, { loggableFields: ["currency", "card"] })] },
      'catalog: tool "issue_refund": loggableFields.1: "card" is not an argument field',
    );
  });

  it("entries of tools must be defineTool tools; a defineTool error in the module names the tool", async () => {
    await fails({ tools: [{ name: "x" }] as never }, "catalog: tools.0: must be a tool made with defineTool");
    const mod = join(dir, "bad.config.ts");
    await writeFile(
      mod,
      `import { defineTool } from ${JSON.stringify(DEFINE_CATALOG)};\nexport default { tools: [defineTool({ name: "send_sms", kind: "unsafe", identity: {}, timeoutMs: 100, invoke: async () => null })] };\n`,
    );
    await expect(loadCatalog(mod)).rejects.toThrow(
      'catalog: tool "send_sms": identity: must declare at least one field for a side-effecting tool',
    );
    await expect(loadCatalog(join(dir, "missing.config.ts"))).rejects.toThrow(/^catalog: cannot load /);
  });
});
