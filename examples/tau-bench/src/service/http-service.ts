/**
 * The τ-bench domain service over HTTP (node:http): one endpoint per tool, reset, state hash,
 * idempotency keys and lookups per {@link RealismTable}, and seeded fault injection on writes.
 * See the package README for the endpoint list.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import canonicalize from "canonicalize";
import {
  type BaseDatabase,
  type Database,
  type DomainName,
  freshDatabase,
  loadBaseDatabase,
  stateHashJcs,
} from "../domain/database.ts";
import { toPlain } from "../domain/py-json.ts";
import { type JsonSchema, loadToolSchemas, typeProblems } from "../domain/schema.ts";
import { invokeTool, signatureError, TOOLS, type ToolDef } from "../domain/tools.ts";
import { DEFAULT_FAULTS, type FaultConfig, type FaultKind, FaultPlanner, faultConfigSchema } from "./faults.ts";
import { HttpError, parseArgs, readBody, send, sleep } from "./http-util.ts";
import {
  IDENTITY_FIELDS,
  type RealismOverrides,
  type RealismProfile,
  type RealismTable,
  resolveRealism,
} from "./realism.ts";
import { deriveSeed } from "./rng.ts";
import { EffectLog, IdempotencyStore, type KeyEntry, type RequestArrival } from "./stores.ts";

/** Options of {@link createTauService}. */
export interface TauServiceOptions {
  /** Absolute path of the τ-bench data directory. */
  dataDir: string;
  /** Domains to host (default both). */
  domains?: DomainName[];
  /** Fault injection (default: none). */
  faults?: Partial<FaultConfig>;
  /** Realism profile (default `mixed`) and per-tool overrides (`<domain>.<tool>`). */
  realism?: RealismProfile;
  realismOverrides?: RealismOverrides;
  /** How long an idempotency key's response is remembered (default 24 h). */
  keyRetentionMs?: number;
  /** Maximum number of named instances (`/<domain>.<instance>/…`) per domain (default 64). */
  maxInstances?: number;
  /** Maximum request body size (default 1 MiB). */
  bodyLimitBytes?: number;
}

/** A running (or ready to run) service. */
export interface TauService {
  readonly server: Server;
  /** Starts listening; resolves to the base URL. */
  listen(port?: number, host?: string): Promise<string>;
  /** Stops listening and drops every connection (hanging responses included). */
  close(): Promise<void>;
  /** Replaces the fault configuration and reseeds every instance. */
  setFaults(faults: Partial<FaultConfig>): FaultConfig;
  /** The effective realism table. */
  readonly realism: RealismTable;
}

/** The state of one domain instance: database, keys, effect log and fault stream. */
class Instance {
  db: Database;
  keys: IdempotencyStore;
  effects = new EffectLog();
  /** Every tool request as it arrived, oldest first (`GET /<d>/requests`). */
  requests: RequestArrival[] = [];
  planner: FaultPlanner;

  constructor(
    readonly name: string,
    private readonly base: BaseDatabase,
    private readonly retentionMs: number,
    faults: FaultConfig,
  ) {
    this.db = freshDatabase(base);
    this.keys = new IdempotencyStore(retentionMs);
    this.planner = new FaultPlanner(faults, deriveSeed(faults.seed, name));
  }

  reset(faults: FaultConfig, seed?: number): void {
    this.db = freshDatabase(this.base);
    this.keys = new IdempotencyStore(this.retentionMs);
    this.effects = new EffectLog();
    this.requests = [];
    if (seed !== undefined) this.planner = new FaultPlanner(faults, deriveSeed(seed, this.name));
  }

  reseed(faults: FaultConfig): void {
    this.planner = new FaultPlanner(faults, deriveSeed(faults.seed, this.name));
  }
}

const KEY_RE = /^[\x21-\x7e]{1,255}$/;
const INSTANCE_RE = /^([a-z]+)(?:\.([A-Za-z0-9_-]{1,64}))?$/;

/** Loads the databases and builds the HTTP service (call `listen` to start it). */
export function createTauService(options: TauServiceOptions): TauService {
  const domains = options.domains ?? ["retail", "airline"];
  const retentionMs = options.keyRetentionMs ?? 24 * 3600_000;
  const maxInstances = options.maxInstances ?? 64;
  const bodyLimit = options.bodyLimitBytes ?? 1 << 20;
  const realism = resolveRealism(options.realism, options.realismOverrides);
  let faults: FaultConfig = faultConfigSchema.parse({ ...DEFAULT_FAULTS, ...options.faults });
  const bases = new Map<DomainName, BaseDatabase>();
  const schemas = new Map<string, JsonSchema>();
  for (const d of domains) {
    bases.set(d, loadBaseDatabase(options.dataDir, d));
    for (const s of loadToolSchemas(options.dataDir, d)) {
      const tool = TOOLS[d].get(s.name);
      if (!tool || tool.kind !== s.kind) throw new Error(`tools.json ${d}.${s.name} does not match the registry`);
      schemas.set(`${d}.${s.name}`, s.parameters);
    }
  }
  const instances = new Map<string, Instance>();
  const hangTimers = new Set<NodeJS.Timeout>();

  function instanceFor(segment: string): [DomainName, Instance] {
    const m = INSTANCE_RE.exec(segment);
    const domain = m?.[1] as DomainName | undefined;
    const base = domain ? bases.get(domain) : undefined;
    if (!m || !domain || !base) throw new HttpError(404, "unknown_domain", `unknown domain ${segment}`);
    const name = segment;
    let inst = instances.get(name);
    if (!inst) {
      const count = [...instances.keys()].filter((k) => k.startsWith(`${domain}.`)).length;
      if (m[2] !== undefined && count >= maxInstances) {
        throw new HttpError(429, "too_many_instances", `at most ${maxInstances} instances per domain`);
      }
      inst = new Instance(name, base, retentionMs, faults);
      instances.set(name, inst);
    }
    return [domain, inst];
  }

  function hang(res: ServerResponse, ms: number): void {
    const t = setTimeout(() => {
      hangTimers.delete(t);
      res.socket?.destroy();
    }, ms);
    hangTimers.add(t);
  }

  async function callTool(
    req: IncomingMessage,
    res: ServerResponse,
    domain: DomainName,
    inst: Instance,
    tool: ToolDef,
  ) {
    const isWrite = tool.kind === "write";
    const deadline = Number(req.headers["request-deadline"]);
    const rawKeyHeader = req.headers["idempotency-key"];
    inst.requests.push({
      tool: tool.name,
      kind: isWrite ? "write" : "read",
      at: Date.now(),
      deadlineEpochMs: req.headers["request-deadline"] !== undefined && Number.isFinite(deadline) ? deadline : null,
      ...(typeof rawKeyHeader === "string" ? { key: rawKeyHeader } : {}),
    });
    const fault: FaultKind | undefined = isWrite ? inst.planner.next() : undefined;
    if (fault === "refuse") {
      req.socket.destroy();
      return;
    }
    const args = parseArgs(await readBody(req, bodyLimit));
    const bad = signatureError(tool, args);
    if (!bad) {
      const problems = typeProblems(schemas.get(`${domain}.${tool.name}`) ?? {}, args);
      if (problems.length > 0)
        throw new HttpError(400, "invalid_arguments", `invalid arguments: ${problems.join("; ")}`);
    }
    if (fault === "503") {
      send(res, 503, { error: "service_unavailable", message: "injected fault: 503 before doing any work" });
      return;
    }
    if (fault === "reset") {
      req.socket.resetAndDestroy();
      return;
    }
    const cfg = isWrite ? realism[domain][tool.name] : undefined;
    const rawKey = req.headers["idempotency-key"];
    const key = cfg?.idempotencyKey && typeof rawKey === "string" ? rawKey : undefined;
    if (key !== undefined && !KEY_RE.test(key)) {
      throw new HttpError(400, "bad_idempotency_key", "Idempotency-Key must be 1-255 visible ASCII characters");
    }
    const plainArgs = toPlain(args) as Record<string, unknown>;
    const db = inst.db;
    const keys = inst.keys;
    const effects = inst.effects;
    let entry: KeyEntry | undefined;
    if (key !== undefined) {
      const fingerprint = canonicalize({ tool: tool.name, args: plainArgs }) as string;
      const decision = keys.begin(key, tool.name, fingerprint, plainArgs, Date.now());
      if (decision.kind === "in_flight") {
        send(res, 409, { error: "key_in_flight", message: `a request with Idempotency-Key ${key} is in flight` });
        return;
      }
      if (decision.kind === "mismatch") {
        send(res, 422, {
          error: "key_reused",
          message: `Idempotency-Key ${key} was used for a different request (${decision.entry.tool})`,
        });
        return;
      }
      if (decision.kind === "replay") {
        send(res, 200, { output: decision.entry.output ?? null }, { "idempotent-replayed": "true" });
        return;
      }
      entry = decision.entry;
    }
    if (cfg && cfg.latencyMs > 0) await sleep(cfg.latencyMs);
    let output: string | null;
    try {
      output = invokeTool(db, tool.name, args);
    } catch (e) {
      if (entry) keys.abandon(entry);
      throw e;
    }
    const now = Date.now();
    const visibleAt = fault === "lag" ? now + faults.lagMs : now;
    if (entry) keys.complete(entry, output, now, visibleAt);
    if (isWrite && typeof output === "string" && !output.startsWith("Error:")) {
      let record: unknown;
      if (output.startsWith("{")) record = JSON.parse(output);
      effects.add({ tool: tool.name, args: plainArgs, output, record, key, at: now, visibleAt });
    }
    const respond = fault === "lag" ? faults.lagResponse : fault;
    if (respond === "hang") {
      hang(res, faults.hangMs);
      return;
    }
    if (respond === "504") {
      send(res, 504, { error: "gateway_timeout", message: "injected fault: 504 after doing the work" });
      return;
    }
    if (respond === "reset-after") {
      req.socket.resetAndDestroy();
      return;
    }
    send(res, 200, { output });
  }

  function lookupByKey(res: ServerResponse, domain: DomainName, inst: Instance, key: string) {
    const now = Date.now();
    const e = inst.keys.get(key, now);
    if (!e || !realism[domain][e.tool]?.keyLookup) {
      send(res, 404, { error: "not_found", message: `no request with Idempotency-Key ${key}` });
      return;
    }
    if (e.state === "in_flight") {
      send(res, 409, { error: "key_in_flight", message: `the request with Idempotency-Key ${key} is in flight` });
      return;
    }
    if ((e.visibleAt ?? 0) > now) {
      send(res, 404, { error: "not_found", message: `no request with Idempotency-Key ${key}` });
      return;
    }
    send(res, 200, { key, tool: e.tool, args: e.args, output: e.output ?? null, at: e.completedAt });
  }

  function lookupByIdentity(
    res: ServerResponse,
    domain: DomainName,
    inst: Instance,
    tool: string,
    query: URLSearchParams,
  ) {
    const cfg = realism[domain][tool];
    if (!cfg?.identityLookup) {
      throw new HttpError(404, "lookup_not_offered", `${domain} offers no lookup for ${tool}`);
    }
    const identity = IDENTITY_FIELDS[domain][tool] ?? [];
    const missing = identity.filter((f) => !query.has(f));
    if (missing.length > 0) throw new HttpError(400, "missing_identity", `lookup needs ${missing.join(", ")}`);
    const sinceText = query.get("since") ?? "0";
    const since = Number(sinceText);
    if (!Number.isFinite(since)) throw new HttpError(400, "bad_since", "since must be epoch milliseconds");
    const filters: Record<string, string> = {};
    for (const [k, v] of query) if (k !== "since") filters[k] = v;
    const found = inst.effects.find(tool, filters, since, Date.now());
    const last = found[found.length - 1];
    send(res, 200, last ? { found: true, count: found.length, effect: last } : { found: false, count: 0 });
  }

  function toolList(domain: DomainName) {
    return [...TOOLS[domain].values()].map((t) => ({
      name: t.name,
      kind: t.kind,
      params: t.params,
      ...(t.kind === "write" ? { ...realism[domain][t.name], identityFields: IDENTITY_FIELDS[domain][t.name] } : {}),
    }));
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
    const method = req.method ?? "GET";
    if (parts.length === 1 && parts[0] === "health") return send(res, 200, { ok: true, domains });
    if (parts[0] === "admin" && parts[1] === "faults" && parts.length === 2) {
      if (method === "GET") return send(res, 200, faults);
      if (method === "PUT") {
        const body = parseArgs(await readBody(req, bodyLimit));
        const parsed = faultConfigSchema.safeParse({ ...faults, ...(toPlain(body) as object) });
        if (!parsed.success) throw new HttpError(400, "invalid_faults", parsed.error.message);
        return send(res, 200, service.setFaults(parsed.data));
      }
    }
    const [segment, action, ...rest] = parts;
    if (segment === undefined || action === undefined) throw new HttpError(404, "not_found", "no such endpoint");
    const [domain, inst] = instanceFor(segment);
    if (action === "tools" && rest.length === 0 && method === "GET") return send(res, 200, toolList(domain));
    if (action === "tools" && rest.length === 1 && method === "POST") {
      const tool = TOOLS[domain].get(rest[0] as string);
      if (!tool) throw new HttpError(404, "unknown_tool", `Unknown action ${rest[0]}`);
      return callTool(req, res, domain, inst, tool);
    }
    if (action === "reset" && rest.length === 0 && method === "POST") {
      const body = parseArgs(await readBody(req, bodyLimit));
      const seed = body.get("seed");
      if (seed !== undefined && typeof seed !== "number")
        throw new HttpError(400, "bad_seed", "seed must be an integer");
      inst.reset(faults, seed);
      return send(res, 200, { ok: true });
    }
    if (action === "effects" && rest.length === 0 && method === "GET") {
      return send(res, 200, { effects: inst.effects.all() });
    }
    if (action === "requests" && rest.length === 0 && method === "GET") {
      return send(res, 200, { requests: inst.requests });
    }
    if (action === "state-hash" && rest.length === 0 && method === "GET") {
      return send(res, 200, { state_hash_jcs: stateHashJcs(inst.db) });
    }
    if (action === "lookup" && method === "GET") {
      if (rest.length === 2 && rest[0] === "by-key") return lookupByKey(res, domain, inst, rest[1] as string);
      if (rest.length === 1) return lookupByIdentity(res, domain, inst, rest[0] as string, url.searchParams);
    }
    throw new HttpError(404, "not_found", `no endpoint ${method} ${url.pathname}`);
  }

  const server = createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    route(req, res).catch((e: unknown) => {
      if (res.headersSent || req.socket.destroyed) return;
      if (e instanceof HttpError) send(res, e.status, { error: e.code, message: e.message });
      else send(res, 500, { error: "internal", message: e instanceof Error ? e.message : String(e) });
    });
  });
  const sockets = new Set<Socket>();
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });

  const service: TauService = {
    server,
    realism,
    listen(port = 0, host = "127.0.0.1") {
      return new Promise((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          const a = server.address() as AddressInfo;
          resolve(`http://${host.includes(":") ? `[${host}]` : host}:${a.port}`);
        });
      });
    },
    close() {
      for (const t of hangTimers) clearTimeout(t);
      hangTimers.clear();
      return new Promise((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
    setFaults(next) {
      faults = faultConfigSchema.parse({ ...faults, ...next });
      for (const inst of instances.values()) inst.reseed(faults);
      return faults;
    },
  };
  return service;
}
