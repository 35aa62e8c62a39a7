/** Test helpers: the data location, a service on a free port, and small HTTP helpers. */
import { join } from "node:path";
import { loadTasks, type Task } from "../src/domain/tasks.ts";
import { createTauService, type TauService, type TauServiceOptions } from "../src/service/http-service.ts";
import { tauBenchDataDir, tauBenchDataPresent } from "../src/settings.ts";

/** The τ-bench data directory (`TAU_BENCH_DATA_DIR`; default: the copy in `examples/tau-bench/data`). */
export const DATA_DIR = tauBenchDataDir();
// The repository carries the data, so a missing folder is a broken checkout or a wrong setting: the
// tests fail saying so, never skip.
if (!tauBenchDataPresent(DATA_DIR)) {
  throw new Error(
    `τ-bench data not found at ${DATA_DIR}: restore examples/tau-bench/data (git checkout -- examples/tau-bench/data) or point TAU_BENCH_DATA_DIR at a copy`,
  );
}

/** A started service and its base URL. */
export interface Running {
  service: TauService;
  url: string;
}

/** Starts a service on a free port. */
export async function start(options: Partial<TauServiceOptions> = {}): Promise<Running> {
  const service = createTauService({ dataDir: DATA_DIR, ...options });
  const url = await service.listen(0);
  return { service, url };
}

/** A fetch result reduced to status, JSON body and headers (or the network error code). */
export interface Reply {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/** POSTs a JSON text body. */
export async function post(
  url: string,
  body: string,
  headers: Record<string, string> = {},
  timeoutMs = 10_000,
): Promise<Reply> {
  const r = await fetch(url, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...headers },
    signal: AbortSignal.timeout(timeoutMs),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown>, headers: r.headers };
}

/** GETs a JSON endpoint. */
export async function get(url: string): Promise<Reply> {
  const r = await fetch(url);
  return { status: r.status, body: (await r.json()) as Record<string, unknown>, headers: r.headers };
}

/** The network error code of a failed fetch (e.g. `ECONNRESET`, `UND_ERR_SOCKET`), or `"ok"`. */
export async function networkOutcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (e) {
    const err = e as { name?: string; cause?: { code?: string } };
    if (err.name === "TimeoutError" || err.name === "AbortError") return "timeout";
    return err.cause?.code ?? err.name ?? "error";
  }
}

/** The current state hash of a domain instance. */
export async function stateHash(url: string, domain: string): Promise<string> {
  return (await get(`${url}/${domain}/state-hash`)).body.state_hash_jcs as string;
}

/** Visible tasks of one split. */
export function tasks(domain: string, split: string): Task[] {
  return loadTasks(join(DATA_DIR, domain, `tasks_${split}.json`));
}

/** The first visible retail task whose first action uses `tool`. */
export function firstRetailAction(tool: string): Task["actions"][number] {
  for (const t of tasks("retail", "train")) {
    const a = t.actions[0];
    if (a?.name === tool) return a;
  }
  throw new Error(`no task starts with ${tool}`);
}
