/** Task and oracle files of the shared format (`<domain>/tasks_<split>.json`, `oracle_<split>.json`). */
import { readFileSync } from "node:fs";
import { getKey, getList, type PyDict, pyParse } from "./py-json.ts";

/** One ground-truth action: a tool name and its keyword arguments (floats kept). */
export interface TaskAction {
  name: string;
  kwargs: PyDict;
}

/** One task: its id, user and ground-truth actions. */
export interface Task {
  id: string;
  userId: string;
  actions: TaskAction[];
}

/** One oracle trace. */
export interface OracleEntry {
  outputs: (string | null)[];
  state_hash: string;
  state_hash_jcs: string;
}

/** Reads a task file, keeping the int/float distinction of the arguments. */
export function loadTasks(file: string): Task[] {
  const list = pyParse(readFileSync(file, "utf8"));
  if (!Array.isArray(list)) throw new Error(`${file}: not a list`);
  return list.map((t) => ({
    id: getKey(t, "id") as string,
    userId: getKey(t, "user_id") as string,
    actions: getList(t, "actions").map((a) => ({
      name: getKey(a, "name") as string,
      kwargs: getKey(a, "kwargs") as PyDict,
    })),
  }));
}

/** Reads an oracle file (task id → trace). */
export function loadOracle(file: string): Record<string, OracleEntry> {
  return JSON.parse(readFileSync(file, "utf8")) as Record<string, OracleEntry>;
}
