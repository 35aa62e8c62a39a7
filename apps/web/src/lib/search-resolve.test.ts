import { describe, expect, it } from "vitest";
import { classifySearch } from "./search.ts";
import { resolveSearch, type SearchLookups } from "./search-resolve.ts";

const KEY = "a6c763d983f2bfeb6708a2a2494a12de";
const TRACE = "0af7651916cd43dd8448eb211c80319c";

/** Lookups over a tiny fixed world; records which were asked. */
function world(facts: { keys?: string[]; traces?: Record<string, string>; runs?: string[]; values?: string[] }) {
  const asked: string[] = [];
  const ask = <T>(what: string, answer: T): Promise<T> => {
    asked.push(what);
    return Promise.resolve(answer);
  };
  const lookups: SearchLookups = {
    keyExists: (key) => ask(`key:${key}`, (facts.keys ?? []).includes(key)),
    keyOfTrace: (trace) => ask(`trace:${trace}`, facts.traces?.[trace] ?? null),
    runExists: (run) => ask(`run:${run}`, (facts.runs ?? []).includes(run)),
    identityHolds: (value) => ask(`identity:${value}`, (facts.values ?? []).includes(value)),
  };
  return { lookups, asked };
}

const resolve = (text: string, lookups: SearchLookups) => resolveSearch(classifySearch(text), lookups);

describe("resolveSearch: the search box's precedence", () => {
  it("a key first, then a trace id, then the identity values", async () => {
    expect(await resolve(KEY.toUpperCase(), world({ keys: [KEY] }).lookups)).toEqual({ path: `/intents/${KEY}` });
    const traced = world({ traces: { [TRACE]: KEY } });
    expect(await resolve(TRACE, traced.lookups)).toEqual({ path: `/intents/${KEY}` });
    expect(traced.asked).toEqual([`key:${TRACE}`, `trace:${TRACE}`]);
    expect(await resolve(TRACE, world({}).lookups)).toEqual({ path: `/identity?value=${TRACE}` });
  });
  it("an order id opens its records; a run id its run; both: the records, which link the run", async () => {
    const w = { runs: ["run-7", "A-1182"], values: ["A-1182"] };
    expect(await resolve("A-1182", world({ values: ["A-1182"] }).lookups)).toEqual({ path: "/identity?value=A-1182" });
    expect(await resolve("run-7", world(w).lookups)).toEqual({ path: "/runs/run-7" });
    expect(await resolve("A-1182", world(w).lookups)).toEqual({ path: "/identity?value=A-1182" });
    expect(await resolve("nothing-7", world(w).lookups)).toEqual({ path: "/identity?value=nothing-7" });
  });
  it("a value that cannot be a run id asks only about identities; empty is nothing; too long says why", async () => {
    const w = world({});
    expect(await resolve("Café 12", w.lookups)).toEqual({ path: "/identity?value=Caf%C3%A9+12" });
    expect(w.asked).toEqual(["identity:Café 12"]);
    expect(await resolve("  ", w.lookups)).toBeNull();
    expect(await resolve("x".repeat(201), w.lookups)).toMatchObject({ message: expect.stringMatching(/200/) });
  });
  it("nothing found as typed: the value with '#' added or removed, then a sentence's id-like words, saying what was typed", async () => {
    expect(await resolve("W5199551", world({ values: ["#W5199551"] }).lookups)).toEqual({
      path: "/identity?value=%23W5199551&asked=W5199551",
    });
    expect(await resolve("#A-1182", world({ values: ["A-1182"] }).lookups)).toEqual({
      path: "/identity?value=A-1182&asked=%23A-1182",
    });
    const sentence = world({ values: ["A-1182"] });
    expect(await resolve("what happened to order A-1182?", sentence.lookups)).toEqual({
      path: `/identity?${new URLSearchParams({ value: "A-1182", asked: "what happened to order A-1182?" })}`,
    });
    // The exact value held: no alternative is asked; none held: the exact value's (empty) page.
    const exact = world({ values: ["W5199551", "#W5199551"] });
    expect(await resolve("W5199551", exact.lookups)).toEqual({ path: "/identity?value=W5199551" });
    expect(exact.asked).not.toContain("identity:#W5199551");
    expect(await resolve("order Z-99?", world({}).lookups)).toEqual({ path: "/identity?value=order+Z-99%3F" });
  });
  it("a failing lookup is thrown to the caller (the box says the search failed)", async () => {
    const { lookups } = world({});
    const failing = { ...lookups, runExists: () => Promise.reject(new Error("executor down")) };
    await expect(resolve("A-1182", failing)).rejects.toThrow("executor down");
  });
});
