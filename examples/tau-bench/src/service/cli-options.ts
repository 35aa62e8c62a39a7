/** Command-line options of the service (`src/service/main.ts`). */
import { parseArgs } from "node:util";
import { z } from "zod";
import type { DomainName } from "../domain/database.ts";
import { DEFAULT_FAULTS, parseFaultMix } from "./faults.ts";
import type { TauServiceOptions } from "./http-service.ts";
import { parseRealismOverride, type RealismOverrides } from "./realism.ts";

/** Usage text. */
export const USAGE = `usage: tsx src/service/main.ts [options]
  --port N                 listen port (default 4100; 0 = any)
  --host H                 listen address (default 127.0.0.1)
  --domains retail,airline domains to host (default both)
  --data-dir DIR           τ-bench data (default: TAU_BENCH_DATA_DIR, i.e. examples/tau-bench/data from the repo root)
  --fault-rate R           probability in [0,1] that a write request gets a fault (default 0)
  --fault-mix K=W,...      weights of refuse,503,hang,504,reset,lag (default all 1), or a named mix:
                           all, lag-heavy (= lag=4,hang=2,504=1,reset=1,503=1,refuse=1)
  --seed N                 fault RNG seed (default 1)
  --hang-ms N              hang: withhold the response this long, then drop the socket (default 10000)
  --lag-ms N               lag: effect invisible to lookups this long (default 2000)
  --lag-response R         lag: what the client gets: ok|504|hang (default 504)
  --realism P              per-tool realism profile: mixed|full|none (default mixed)
  --tool D.T=FLAGS         override one write tool: key,key-lookup,identity-lookup,latency=MS or none (repeatable)
  --key-retention-ms N     how long idempotency keys are remembered (default 86400000)
  --max-instances N        named instances per domain (/<domain>.<name>/…, default 64)`;

const num = z.coerce.number().finite();

/** Parses argv into service options plus the listen address. */
export function parseCliOptions(
  argv: string[],
  defaultDataDir: string,
): { port: number; host: string; options: TauServiceOptions } | { help: true } {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: "string", default: "4100" },
      host: { type: "string", default: "127.0.0.1" },
      domains: { type: "string", default: "retail,airline" },
      "data-dir": { type: "string" },
      "fault-rate": { type: "string", default: "0" },
      "fault-mix": { type: "string" },
      seed: { type: "string", default: String(DEFAULT_FAULTS.seed) },
      "hang-ms": { type: "string", default: String(DEFAULT_FAULTS.hangMs) },
      "lag-ms": { type: "string", default: String(DEFAULT_FAULTS.lagMs) },
      "lag-response": { type: "string", default: DEFAULT_FAULTS.lagResponse },
      realism: { type: "string", default: "mixed" },
      tool: { type: "string", multiple: true, default: [] },
      "key-retention-ms": { type: "string", default: String(24 * 3600_000) },
      "max-instances": { type: "string", default: "64" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) return { help: true };
  const domains = z
    .array(z.enum(["retail", "airline"]))
    .min(1)
    .parse(values.domains.split(",").map((d) => d.trim())) as DomainName[];
  const overrides: RealismOverrides = {};
  for (const t of values.tool) {
    const [name, o] = parseRealismOverride(t);
    overrides[name] = o;
  }
  return {
    port: z.coerce.number().int().min(0).max(65535).parse(values.port),
    host: values.host,
    options: {
      dataDir: values["data-dir"] ?? defaultDataDir,
      domains,
      faults: {
        rate: num.min(0).max(1).parse(values["fault-rate"]),
        mix: values["fault-mix"] ? parseFaultMix(values["fault-mix"]) : DEFAULT_FAULTS.mix,
        seed: z.coerce.number().int().parse(values.seed),
        hangMs: num.int().nonnegative().parse(values["hang-ms"]),
        lagMs: num.int().nonnegative().parse(values["lag-ms"]),
        lagResponse: z.enum(["ok", "504", "hang"]).parse(values["lag-response"]),
      },
      realism: z.enum(["mixed", "full", "none"]).parse(values.realism),
      realismOverrides: overrides,
      keyRetentionMs: num.int().positive().parse(values["key-retention-ms"]),
      maxInstances: num.int().positive().parse(values["max-instances"]),
    },
  };
}
