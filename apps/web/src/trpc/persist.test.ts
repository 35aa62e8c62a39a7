/**
 * The dashboard keeps the last answers in sessionStorage for a reload while the executor is down, but
 * never a `notifications.*` answer: a channel's URL (a Slack incoming webhook is a credential) stays in
 * memory only (issue 23 §3). A real QueryClient, a Map-backed Storage.
 */
import { QueryClient } from "@tanstack/react-query";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { keepable, keepLastData, restoreLastData } from "./persist.ts";

const SLACK = "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX";
const channelsKey = [["notifications", "channels", "list"], { input: { tenant: "acme" }, type: "query" }];
const deliveriesKey = [["notifications", "deliveries", "list"], { input: {}, type: "query" }];
const intentsKey = [["intents", "list"], { input: {}, type: "query" }];

/** A sessionStorage over a Map. */
function storage(): Storage {
  const map = new Map<string, string>();
  return {
    get length() {
      return map.size;
    },
    clear: () => map.clear(),
    getItem: (k) => map.get(k) ?? null,
    key: (i) => [...map.keys()][i] ?? null,
    removeItem: (k) => void map.delete(k),
    setItem: (k, v) => void map.set(k, String(v)),
  };
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.stubGlobal("window", { sessionStorage: storage() });
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

describe("persisted answers", () => {
  it("keepable: not notifications.*; every other procedure", () => {
    expect(keepable(channelsKey)).toBe(false);
    expect(keepable(deliveriesKey)).toBe(false);
    expect(keepable(intentsKey)).toBe(true);
    expect(keepable([["keys", "list"]])).toBe(true);
    expect(keepable([])).toBe(true);
  });

  it("writes other answers but never a channel's URL", async () => {
    const client = new QueryClient();
    const stop = keepLastData(client);
    client.setQueryData(channelsKey, { channels: [{ id: "nch_1", kind: "slack", url: SLACK }] });
    client.setQueryData(deliveriesKey, { items: [], nextCursor: null });
    client.setQueryData(intentsKey, { items: [{ key: "k1" }] });
    await vi.advanceTimersByTimeAsync(3_000);
    stop();
    const raw = window.sessionStorage.getItem("tristate.lastData.v1");
    expect(raw).toContain("k1");
    expect(raw).not.toContain("hooks.slack.com");
    expect(raw).not.toContain("notifications");
  });

  it("drops notifications answers a tab stored before this rule, restoring the others", () => {
    const old = new QueryClient();
    old.setQueryData(channelsKey, { channels: [{ id: "nch_1", kind: "slack", url: SLACK }] });
    old.setQueryData(intentsKey, { items: [{ key: "k1" }] });
    const queries = old
      .getQueryCache()
      .getAll()
      .map((q) => ({ queryKey: q.queryKey, queryHash: q.queryHash, state: q.state }));
    window.sessionStorage.setItem("tristate.lastData.v1", JSON.stringify({ mutations: [], queries }));
    const client = new QueryClient();
    restoreLastData(client);
    expect(client.getQueryData(intentsKey)).toStrictEqual({ items: [{ key: "k1" }] });
    expect(client.getQueryData(channelsKey)).toBeUndefined();
  });
});
