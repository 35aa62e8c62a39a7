/**
 * Conformance: every visible task's ground-truth actions replayed on a fresh database reproduce the
 * oracle's outputs (exact strings) and final `state_hash_jcs` — in-process and through the HTTP service.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, loadBaseDatabase, stateHashJcs } from "../src/domain/database.ts";
import { pyDumps } from "../src/domain/py-json.ts";
import { loadToolSchemas } from "../src/domain/schema.ts";
import { loadOracle, type Task } from "../src/domain/tasks.ts";
import { invokeTool, TOOLS } from "../src/domain/tools.ts";
import { DATA_DIR, post, type Running, start, stateHash, tasks } from "./support.ts";

const SPLITS = [
  ["retail", "train"],
  ["retail", "dev"],
  ["airline", "test"],
] as const;

function suite(): {
  domain: "retail" | "airline";
  split: string;
  tasks: Task[];
  oracle: ReturnType<typeof loadOracle>;
}[] {
  return SPLITS.map(([domain, split]) => ({
    domain,
    split,
    tasks: tasks(domain, split),
    oracle: loadOracle(join(DATA_DIR, domain, `oracle_${split}.json`)),
  }));
}

describe("τ-bench conformance", () => {
  it("registers exactly the tools of tools.json, with their kinds and parameters", () => {
    for (const domain of ["retail", "airline"] as const) {
      const schemas = loadToolSchemas(DATA_DIR, domain);
      expect([...TOOLS[domain].keys()].sort()).toEqual(schemas.map((s) => s.name).sort());
      for (const s of schemas) {
        const tool = TOOLS[domain].get(s.name);
        expect(tool?.kind, s.name).toBe(s.kind);
        expect(tool?.params, s.name).toEqual(Object.keys(s.parameters.properties ?? {}));
      }
    }
  });

  it("hashes the initial databases to initial_state_hash_jcs.txt", () => {
    for (const domain of ["retail", "airline"] as const) {
      const expected = readFileSync(join(DATA_DIR, domain, "initial_state_hash_jcs.txt"), "utf8").trim();
      expect(stateHashJcs(freshDatabase(loadBaseDatabase(DATA_DIR, domain)))).toBe(expected);
    }
  });

  it("replays all 540 visible tasks in-process: every output and final state matches the oracle", () => {
    let outputs = 0;
    let taskCount = 0;
    for (const { domain, tasks: list, oracle } of suite()) {
      const base = loadBaseDatabase(DATA_DIR, domain);
      const initial = stateHashJcs(freshDatabase(base));
      for (const task of list) {
        const expected = oracle[task.id];
        expect(expected, task.id).toBeDefined();
        const db = freshDatabase(base);
        task.actions.forEach((a, k) => {
          expect(invokeTool(db, a.name, a.kwargs), `${task.id} action ${k} ${a.name}`).toBe(expected?.outputs[k]);
          outputs++;
        });
        expect(stateHashJcs(db), task.id).toBe(expected?.state_hash_jcs);
        taskCount++;
      }
      // Copy-on-write never touched the shared initial state.
      expect(stateHashJcs(freshDatabase(base))).toBe(initial);
    }
    expect(taskCount).toBe(540);
    expect(outputs).toBe(830);
  });

  describe("through the HTTP service (no faults, keep-alive)", () => {
    let running: Running;
    beforeAll(async () => {
      running = await start({ faults: { rate: 0 } });
    });
    afterAll(() => running.service.close());

    it("replays all 540 visible tasks: every output (as JSON) and final state_hash_jcs matches", async () => {
      const t0 = Date.now();
      let matched = 0;
      for (const { domain, tasks: list, oracle } of suite()) {
        for (const task of list) {
          const expected = oracle[task.id];
          expect((await post(`${running.url}/${domain}/reset`, "{}")).status).toBe(200);
          for (const [k, a] of task.actions.entries()) {
            const r = await post(`${running.url}/${domain}/tools/${a.name}`, pyDumps(a.kwargs));
            expect(r.status, `${task.id} ${k}`).toBe(200);
            expect(r.body.output, `${task.id} action ${k} ${a.name}`).toBe(expected?.outputs[k]);
          }
          expect(await stateHash(running.url, domain), task.id).toBe(expected?.state_hash_jcs);
          matched++;
        }
      }
      expect(matched).toBe(540);
      console.log(`HTTP conformance: ${matched}/540 tasks matched in ${Date.now() - t0} ms`);
    });
  });
});
