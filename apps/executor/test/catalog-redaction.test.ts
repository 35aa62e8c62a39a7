/**
 * A declarative HTTP tool keeps argument values outside `loggableFields` out of every error it throws
 * (issue 9 §8): end to end through the executor against a loopback remote whose answers echo them.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { AmbiguousError, createExecutor, Deadline, isAmbiguousError, MemoryIntentStore } from "@tristate/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redactionFor } from "../src/catalog/http-tool/redaction.ts";
import { fillUrl } from "../src/catalog/http-tool/url-template.ts";
import { buildCatalog } from "../src/catalog/load.ts";

const EMAIL = "Ann.Lee+news@example.com";
/** Every form the e-mail could take in stored text: raw, percent-encoded (either case), form-encoded. */
const FORMS = [EMAIL, encodeURIComponent(EMAIL), encodeURIComponent(EMAIL).toLowerCase(), "%40example.com"];

/**
 * The CRM: `POST /users/<email>/optout` answers 404 naming the user; `POST /users/<email>/erase`
 * answers 500 (the outcome is unknown); its key probe answers 503 and its identity probe answers a
 * state that is neither "found" nor "absent", echoing the user.
 */
let server: Server;
let base: string;
const seen: string[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    req.on("end", () => {
      const url = req.url ?? "";
      const path = new URL(url, "http://crm").pathname;
      const user = decodeURIComponent(/^\/users\/([^/]+)\//.exec(path)?.[1] ?? "");
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (path.endsWith("/optout")) return json(404, { error: `no user ${user}`, path: url });
      if (path.endsWith("/erase")) return json(500, { error: `could not erase ${user}` });
      if (path.endsWith("/requests")) return json(503, { error: `lookup for ${user} unavailable` });
      if (path.endsWith("/requests/search")) return json(200, { state: `queued for ${user}` });
      json(400, { error: "unexpected" });
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A CRM tool on `/users/{email}/<action>`; `list_id` is loggable, `email` is not. */
function crmTool(action: string, over: Record<string, unknown> = {}) {
  return {
    name: `crm_${action}`,
    kind: "unsafe",
    method: "POST",
    url: `${base}/users/{email}/${action}?list={list_id}`,
    args: [
      { name: "email", type: "string", minLength: 3 },
      { name: "list_id", type: "string" },
    ],
    identity: { email: "lower", list_id: "exact" },
    loggableFields: ["list_id"],
    // Without `describe`, core's effect phrase lists the identity values (the e-mail) in the envelope.
    describe: "opt-out from list {list_id}",
    timeoutMs: 1500,
    ...over,
  };
}

async function run(declaration: Record<string, unknown>) {
  const store = new MemoryIntentStore();
  const tools = await buildCatalog({ httpTools: [declaration] });
  const ex = createExecutor({ store, tools, probe: { attempts: 2, spacingMs: 0, timeoutMs: 2000 } });
  const envelope = await ex.call({
    runId: "run-redaction",
    stepId: `step-${declaration.name}`,
    tool: declaration.name as string,
    args: { email: EMAIL, list_id: "weekly-news" },
    deadline: Deadline.after(20_000),
  });
  const record = await store.get(envelope.idempotency_key!);
  const events = await store.listEvents(envelope.idempotency_key!);
  return { envelope, record: record!, events };
}

/** Asserts that no form of the e-mail appears in `text`, case-insensitively. */
function expectNoEmail(label: string, value: unknown) {
  const text = JSON.stringify(value).toLowerCase();
  for (const form of FORMS) expect(text, `${label} holds ${form}`).not.toContain(form.toLowerCase());
}

describe("declarative tools keep non-loggable argument values out of stored errors", () => {
  it("a 404 on /users/{email}/optout: the record's error, its events and the envelope name {email}, never the address", async () => {
    const { envelope, record, events } = await run(crmTool("optout"));
    expect(seen.at(-1)).toBe(`POST /users/${encodeURIComponent(EMAIL)}/optout?list=weekly-news`);
    expect(envelope).toMatchObject({ status: "FAILED_NO_EFFECT", error: { code: "REJECTED", httpStatus: 404 } });
    expect(record.error?.message).toContain(`${base}/users/{email}/optout`);
    expectNoEmail("record.error", record.error);
    expectNoEmail("events", events);
    expectNoEmail("envelope", envelope);
  });

  it("failing probes (a 503, an answer that is no evidence) store their errors redacted too", async () => {
    const { envelope, record, events } = await run(
      crmTool("erase", {
        keyProbe: { url: `${base}/users/{email}/requests?ref={key}`, found: { type: "non_empty_array" } },
        identityProbe: {
          url: `${base}/users/{email}/requests/search?since={since}&list={list_id}`,
          found: { type: "json_path_equals", path: "state", values: ["done"], absentValues: ["none"] },
        },
      }),
    );
    expect(envelope.status).toBe("UNKNOWN");
    expect(seen.filter((s) => s.startsWith("POST /users/") && s.includes("/erase"))).toHaveLength(1);
    const failed = events.filter((e) => e.type === "probe" && e.data.answer === "failed");
    expect(failed.map((e) => e.data.probe)).toEqual(["key", "identity", "key", "identity"]);
    expect(String(failed[0]!.data.error)).toContain("/users/{email}/requests");
    expect(String(failed[1]!.data.error)).toContain(`identity probe GET ${base}/users/{email}/requests/search?since=`);
    // The remote echoed the address in its answer; the message names the field instead.
    expect(String(failed[1]!.data.error)).toContain('state = "queued for {email}"');
    expect(String(failed[1]!.data.error)).toContain("list=weekly-news");
    expectNoEmail("record.error", record.error);
    expectNoEmail("events", events);
    expectNoEmail("envelope", envelope);
  });
});

describe("redaction of URLs and text", () => {
  it("redacts a value in the path and the query in every form, and leaves loggable values", () => {
    const args = { who: "a b/c@d.example", n: 7, list: "L-1" };
    const filled = fillUrl(
      "https://crm.example/u/{who}/x?who={who}&n={n}&list={list}",
      (name) => args[name as keyof typeof args],
      (name) => name !== "list",
    );
    expect(filled.url).toBe("https://crm.example/u/a%20b%2Fc%40d.example/x?who=a%20b%2Fc%40d.example&n=7&list=L-1");
    expect(filled.shown).toBe("https://crm.example/u/{who}/x?who={who}&n={n}&list=L-1");
    const r = redactionFor(args, new Set(["list"]), [filled]);
    expect(r.text(`GET ${filled.url} failed`)).toBe(`GET ${filled.shown} failed`);
    expect(r.text(`callHttp: GET https://crm.example/u/a%20b%2Fc%40d.example/x → HTTP 404`)).toBe(
      "callHttp: GET https://crm.example/u/{who}/x → HTTP 404",
    );
    expect(r.text("user a b/c@d.example, a+b%2Fc%40d.example, A%20B%2FC%40D.EXAMPLE; list L-1")).toBe(
      "user {who}, {who}, {who}; list L-1",
    );
    // Values shorter than 3 characters are redacted in URLs only: "HTTP 207" stays readable.
    expect(r.text("HTTP 207")).toBe("HTTP 207");
  });
});

describe("a rebuilt error keeps what the executor acts on", () => {
  it("a 503's Retry-After and a 207's items survive redaction (no resend before Retry-After)", () => {
    const r = redactionFor({ email: "ann@example.com" }, new Set(), []);
    const rebuilt = r.error(
      new AmbiguousError("POST /users/ann@example.com → HTTP 503", {
        code: "GATEWAY_5XX",
        httpStatus: 503,
        retryAfterMs: 7000,
        body: { items: [{ to: "ann@example.com", status: "sent" }] },
      }),
    );
    expect(isAmbiguousError(rebuilt)).toBe(true);
    expect(rebuilt).toMatchObject({ code: "GATEWAY_5XX", httpStatus: 503, retryAfterMs: 7000 });
    expect(rebuilt.message).not.toContain("ann@example.com");
    expect(JSON.stringify((rebuilt as AmbiguousError).body)).toBe(
      JSON.stringify({ items: [{ to: "{email}", status: "sent" }] }),
    );
  });
});

describe("declarative secretFields", () => {
  const withPin = (over: Record<string, unknown>) =>
    crmTool("optout", {
      args: [
        { name: "email", type: "string", minLength: 3 },
        { name: "list_id", type: "string" },
        { name: "pin", type: "string" },
      ],
      ...over,
    });
  const refusal = (over: Record<string, unknown>) =>
    buildCatalog({ httpTools: [withPin(over)] }).then(
      () => "built",
      (e: unknown) => (e as Error).message,
    );

  it("are declared on the tool, and redacted from messages whatever their length, even equal to a loggable value", async () => {
    const [tool] = await buildCatalog({ httpTools: [withPin({ secretFields: ["pin", "email"] })] });
    expect(tool?.secretFields).toEqual(["pin", "email"]);
    const r = redactionFor({ pin: "42", list_id: "42", email: "a@b.example" }, new Set(["list_id"]), [], ["pin"]);
    expect(r.text("list 42 refused pin 42 for a@b.example")).toBe("list {pin} refused pin {pin} for {email}");
  });

  it("a field that is not an argument, or that is also loggable, is refused naming it", async () => {
    expect(await refusal({ secretFields: ["card"] })).toBe(
      'catalog: tool "crm_optout": secretFields.0: "card" is not an argument field',
    );
    expect(await refusal({ secretFields: ["pin", "list_id"] })).toBe(
      'catalog: tool "crm_optout": secretFields.1: "list_id" is secret, so it can never be loggable, but loggableFields has "list_id": remove one of them',
    );
  });
});
