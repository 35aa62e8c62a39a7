/**
 * The executor's tool catalog for τ-bench (retail + airline), calling the domain service over HTTP
 * with `callHttp`. Tool names are `<domain>.<tool>` (both domains have a `calculate`, a `think`, …).
 *
 * - Read tools are `read_only`.
 * - Write tools are `idempotent_by_key` where the service honours `Idempotency-Key`, else `unsafe`;
 *   the key probe is `GET /<d>/lookup/by-key/<key>`, the identity probe
 *   `GET /<d>/lookup/<tool>?<scalar args>&since=<intent creation>`, each offered per the service's
 *   realism table. `airline.book_reservation` is compensated by `airline.cancel_reservation`. A key
 *   lookup that finds the request answered with `Error: …` returns `refusedUnderKey`: the service
 *   processed it and changed nothing, so the record ends FAILED_NO_EFFECT without a resend.
 * - τ-bench's `Error: …` outputs come back as HTTP 200. For a write tool they mean the domain refused
 *   and nothing changed, so `invoke` throws `RejectedError` (code `REJECTED`): the envelope says
 *   FAILED_NO_EFFECT and carries the exact output in `error.message`. A ground-truth action whose
 *   oracle output is an error therefore ends FAILED_NO_EFFECT with the state untouched, as in the
 *   oracle. For read tools `Error: …` is just the output.
 * - Settle window: every write tool with a probe declares `settleMs`, derived from the service's
 *   fault and realism settings (`settle.ts`), so "absent" counts only once the service can no longer
 *   apply the effect or hide it; for a remote with unbounded lag (`timing: "unbounded"`) none does.
 * - Every argument object carries `tenant`: the service instance (`/<d>.<tenant>/…`, one customer
 *   account / one replayed task). It is identity and never sent to the tool itself.
 */
import {
  type AnyTool,
  callHttp,
  defineTool,
  isRejectedError,
  type ProbeContext,
  type RefusedUnderKey,
  RejectedError,
  refusedUnderKey,
} from "@tristate/core";
import canonicalize from "canonicalize";
import { z } from "zod";
import type { DomainName } from "../domain/database.ts";
import { TOOLS } from "../domain/tools.ts";
import { type RealismTable, resolveRealism } from "../service/realism.ts";
import { WRITE_IDENTITY } from "./identity.ts";
import { type RemoteTiming, settleBoundMs } from "./settle.ts";

/** What every catalog tool returns (and what its probes return when they find the effect). */
export interface TauToolResult {
  /** The exact τ-bench output string (`null` for `send_certificate` in some cases). */
  output: string | null;
  /** How the effect was established when a probe found it. */
  found_by?: "key" | "identity";
  /** The changed record, when an identity probe found it. */
  record?: unknown;
}

/** Options of {@link tauBenchTools}. */
export interface TauCatalogOptions {
  /** Base URL of the domain service, e.g. `http://127.0.0.1:4300`. */
  baseUrl: string;
  /** The service's realism table (which tools honour keys, which lookups exist). Default: `mixed`. */
  realism?: RealismTable;
  /** Per-call timeout of write tools, ms. @default 3000 */
  writeTimeoutMs?: number;
  /** Per-call timeout of read tools, ms. @default 5000 */
  readTimeoutMs?: number;
  /**
   * How late the service may apply a write or keep it from its lookups: its fault settings
   * (`{ faults }`, as given to `createTauService`), from which every write tool with a probe gets
   * `settleMs` = {@link settleBoundMs} (its processing `latencyMs`, plus `lagMs` when `lag` faults
   * can be drawn, plus a 500 ms margin). An `unsafe` tool with an identity probe is then resent
   * after absent probes that ran past that window; on an `idempotent_by_key` tool the window matters
   * only after key retention. `"unbounded"`: no `settleMs` anywhere, so an `unsafe` tool's UNKNOWN
   * waits for a human (use it for a remote whose lookup lag has no bound).
   */
  timing: RemoteTiming;
  /** Idempotency-key retention of the service, ms. @default 24 h */
  keyRetentionMs?: number;
}

/** Catalog name of a τ-bench tool: `<domain>.<tool>`. */
export const catalogName = (domain: DomainName, tool: string): string => `${domain}.${tool}`;

const tenantSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{0,64}$/, "must be 0–64 of A–Z a–z 0–9 _ -")
  .default("");

/** Arguments: the tool's own keyword arguments (validated by the service) plus `tenant`. */
const argsSchema = z.looseObject({ tenant: tenantSchema });
type TauArgs = z.infer<typeof argsSchema>;

/** The service path segment of a tenant: `retail` or `retail.<tenant>`. */
export function segment(domain: DomainName, tenant: string | undefined): string {
  return tenant ? `${domain}.${tenant}` : domain;
}

/** The tool's own keyword arguments (everything but `tenant`). */
export function kwargsOf(args: Record<string, unknown>): Record<string, unknown> {
  const { tenant: _tenant, ...rest } = args;
  return rest;
}

/** True for a τ-bench refusal string. */
export const isDomainError = (output: unknown): output is string =>
  typeof output === "string" && output.startsWith("Error:");

function outputOf(body: unknown): string | null {
  if (typeof body === "object" && body !== null && "output" in body) {
    const output = (body as { output: unknown }).output;
    if (typeof output === "string" || output === null) return output;
  }
  throw new TypeError("the domain service answered without an output");
}

const MAIN_ID = ["order_id", "reservation_id", "user_id"] as const;

function describeCall(domain: DomainName, tool: string, args: TauArgs): string {
  const id = MAIN_ID.find((f) => typeof args[f] === "string");
  const target = id ? ` ${id.replace("_id", "")} ${String(args[id])}` : "";
  // `tenant` is the τ-bench task whose copy of the domain data the call works on, not a Tristate tenant.
  return `${domain} ${tool}${target}${args.tenant ? ` (task ${args.tenant})` : ""}`;
}

/** The reservation id of a booking's result (the tool's output is the reservation as JSON). */
export function reservationIdOf(result: unknown): string | undefined {
  const r = result as TauToolResult | undefined;
  const record = r?.record as { reservation_id?: unknown } | undefined;
  if (typeof record?.reservation_id === "string") return record.reservation_id;
  if (typeof r?.output === "string" && r.output.startsWith("{")) {
    try {
      const parsed = JSON.parse(r.output) as { reservation_id?: unknown };
      if (typeof parsed.reservation_id === "string") return parsed.reservation_id;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

function keyProbe(baseUrl: string, domain: DomainName, tool: string) {
  return async (args: TauArgs, ctx: ProbeContext): Promise<TauToolResult | RefusedUnderKey | null> => {
    let body: { tool?: unknown; output?: unknown };
    try {
      const url = `${baseUrl}/${segment(domain, args.tenant)}/lookup/by-key/${encodeURIComponent(ctx.clientRef)}`;
      body = (await callHttp(ctx, { method: "GET", url })).body as typeof body;
    } catch (error) {
      if (isRejectedError(error) && error.httpStatus === 404) return null; // unknown or not yet visible
      throw error; // 409 in flight, transport: no evidence
    }
    if (body.tool !== tool) throw new Error(`key ${ctx.clientRef} belongs to ${String(body.tool)}, not ${tool}`);
    const output = outputOf(body);
    // Answered with a refusal: the request was processed and changed nothing — proof of no effect,
    // read back from the service's own record of the key (not "absent", which a resend would test).
    if (isDomainError(output)) return refusedUnderKey(output, 200);
    return { output, found_by: "key" };
  };
}

function identityProbe(baseUrl: string, domain: DomainName, tool: string) {
  return async (args: TauArgs, ctx: ProbeContext): Promise<TauToolResult | null> => {
    const kwargs = kwargsOf(args);
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(kwargs)) {
      if (typeof v === "string" || (typeof v === "number" && Number.isFinite(v))) query.set(k, String(v));
    }
    query.set("since", String(ctx.sinceEpochMs));
    const url = `${baseUrl}/${segment(domain, args.tenant)}/lookup/${tool}?${query}`;
    const body = (await callHttp(ctx, { method: "GET", url })).body as {
      found?: unknown;
      effect?: { args?: unknown; output?: unknown; record?: unknown };
    };
    if (body.found !== true) return null;
    // Only this step's effect counts; anything else matching the filters is no evidence either way.
    if (canonicalize(body.effect?.args) !== canonicalize(kwargs)) {
      throw new Error(`an effect of ${tool} since the intent has other arguments; no evidence`);
    }
    return { output: outputOf(body.effect), record: body.effect?.record, found_by: "identity" };
  };
}

/**
 * The catalog for both domains (every tool of `TOOLS`), matching the service's realism table.
 * @throws TypeError when a declaration is invalid (a bug).
 */
export function tauBenchTools(options: TauCatalogOptions): AnyTool[] {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const realism = options.realism ?? resolveRealism("mixed");
  const writeTimeoutMs = options.writeTimeoutMs ?? 3000;
  const readTimeoutMs = options.readTimeoutMs ?? 5000;
  const timing = options.timing;
  const tools: AnyTool[] = [];
  for (const domain of ["retail", "airline"] as const) {
    for (const def of TOOLS[domain].values()) {
      const name = catalogName(domain, def.name);
      const invoke = async (args: TauArgs, ctx: Parameters<AnyTool["invoke"]>[1]): Promise<TauToolResult> => {
        const url = `${baseUrl}/${segment(domain, args.tenant)}/tools/${def.name}`;
        const res = await callHttp(ctx, { method: "POST", url, body: kwargsOf(args) });
        const output = outputOf(res.body);
        if (def.kind === "write" && isDomainError(output)) {
          throw new RejectedError(output, { code: "REJECTED", httpStatus: res.status, body: res.body });
        }
        return { output };
      };
      if (def.kind === "read") {
        tools.push(
          defineTool<TauArgs, TauToolResult>({
            name,
            kind: "read_only",
            description: `τ-bench ${domain} read tool ${def.name}`,
            args: argsSchema,
            timeoutMs: readTimeoutMs,
            describe: (a) => describeCall(domain, def.name, a),
            invoke,
          }),
        );
        continue;
      }
      const r = realism[domain][def.name];
      const identity = WRITE_IDENTITY[domain][def.name];
      if (!r || !identity) throw new TypeError(`tauBenchTools: no realism or identity for ${name}`);
      const keyed = r.idempotencyKey;
      tools.push(
        defineTool<TauArgs, TauToolResult>({
          name,
          kind: keyed ? "idempotent_by_key" : "unsafe",
          description: `τ-bench ${domain} write tool ${def.name}`,
          args: argsSchema,
          identity,
          timeoutMs: writeTimeoutMs,
          keyRetentionMs: options.keyRetentionMs ?? 24 * 3600_000,
          loggableFields: ["tenant", "order_id", "user_id", "reservation_id"],
          describe: (a) => describeCall(domain, def.name, a),
          invoke,
          ...(keyed && r.keyLookup ? { probe: keyProbe(baseUrl, domain, def.name) } : {}),
          ...(r.identityLookup ? { probeByIdentity: identityProbe(baseUrl, domain, def.name) } : {}),
          ...(timing !== "unbounded" && hasProbe(realism, domain, def.name)
            ? { settleMs: settleBoundMs(r, timing.faults, timing.marginMs) }
            : {}),
          ...(domain === "airline" && def.name === "book_reservation"
            ? {
                compensation: {
                  tool: catalogName("airline", "cancel_reservation"),
                  args: (original: TauArgs, result: TauToolResult | undefined) => ({
                    tenant: original.tenant,
                    reservation_id: reservationIdOf(result) ?? "",
                  }),
                },
              }
            : {}),
        }),
      );
    }
  }
  return tools;
}

/** True when a write tool of the table has at least one probe (key lookup or identity lookup). */
export function hasProbe(realism: RealismTable, domain: DomainName, tool: string): boolean {
  const r = realism[domain][tool];
  return Boolean(r && ((r.idempotencyKey && r.keyLookup) || r.identityLookup));
}
