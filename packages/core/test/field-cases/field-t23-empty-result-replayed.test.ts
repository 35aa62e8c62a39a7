/**
 * T23 — An empty success result ("undefined") was read as "nothing stored" and the step ran again
 * (Powertools TypeScript). Source: https://github.com/aws-powertools/powertools-lambda-typescript/issues/2987.
 *
 * Remote `notify-api` (a per-case server): `POST /pings` performs one effect per POST and answers
 * 204 No Content (the tool's result is `undefined`), or 200 with a falsy JSON body (`null`, `0`,
 * `false`, `""`). A repeat call must be replayed from the record whatever the stored result is.
 */
import { afterEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { Deadline } from "../../src/deadline.ts";
import { createExecutor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { defineTool } from "../../src/tool.ts";
import { type CaseServer, startCaseServer } from "./support.ts";

let server: CaseServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const results: [string, unknown][] = [
  ["undefined (204 No Content)", undefined],
  ["null", null],
  ["0", 0],
  ["false", false],
  ["''", ""],
];

describe("field-t23-empty-result-replayed", () => {
  for (const [name, value] of results) {
    it(`a SUCCEEDED step whose result is ${name} is replayed from the record, not run again`, async () => {
      let effects = 0;
      const notify = await startCaseServer((req, res) => {
        if (req.method !== "POST" || req.url !== "/pings") return void res.writeHead(404).end();
        effects++;
        if (value === undefined) return void res.writeHead(204).end();
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));
      });
      server = notify;
      const store = new MemoryIntentStore();
      const executor = createExecutor({
        store,
        tools: [
          defineTool({
            name: "notify.ping",
            kind: "idempotent_by_key",
            identity: { targetRef: canon.upper },
            timeoutMs: 2000,
            invoke: async (args, ctx) =>
              (await callHttp(ctx, { method: "POST", url: `${notify.url}/pings`, body: args })).body,
          }),
        ],
      });
      const ping = () =>
        executor.call({
          runId: "run-23",
          stepId: "ping",
          tool: "notify.ping",
          args: { targetRef: "TGT-01" },
          deadline: Deadline.after(10_000),
        });

      const run1 = await ping();
      expect(run1).toMatchObject({ status: "SUCCEEDED", replayed: false, attempt: 1 });
      expect(run1.result).toStrictEqual(value);
      expect("result" in run1).toBe(value !== undefined);

      const run2 = await ping();
      expect(run2).toMatchObject({ status: "SUCCEEDED", replayed: true, attempt: 1, retry_safe: true });
      expect(run2.result).toStrictEqual(value);
      const posts = notify.seen.filter((r) => r.method === "POST").length;
      expect(posts).toBe(1);
      expect(effects).toBe(1);
    });
  }
});
