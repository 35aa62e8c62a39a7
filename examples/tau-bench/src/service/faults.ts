/**
 * Seeded fault injection for write requests. Each write request draws from the instance's RNG: with
 * probability `rate` it gets one fault, picked by the weights of `mix`.
 */
import { z } from "zod";
import { mulberry32 } from "./rng.ts";

/**
 * The injectable faults (see the README for what the client observes). `reset-after` (the work done,
 * then the connection reset) is last so that seeded draws of mixes without it stay as they were.
 */
export const FAULT_KINDS = ["refuse", "503", "hang", "504", "reset", "lag", "reset-after"] as const;
/** One fault kind. */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Fault injection settings. */
export interface FaultConfig {
  /** Probability in [0, 1] that a write request gets a fault. */
  rate: number;
  /** Relative weights of the fault kinds (missing = 0). */
  mix: Partial<Record<FaultKind, number>>;
  /** RNG seed. */
  seed: number;
  /** `hang`: how long the response is withheld before the socket is destroyed, ms. */
  hangMs: number;
  /** `lag`: how long the effect stays invisible to lookups (by key and by identity), ms. */
  lagMs: number;
  /** `lag`: what the client gets (`ok` = 200, `504`, or `hang`). */
  lagResponse: "ok" | "504" | "hang";
}

/** Defaults: no faults, every kind equally likely when a rate is set. */
export const DEFAULT_FAULTS: FaultConfig = {
  rate: 0,
  mix: { refuse: 1, "503": 1, hang: 1, "504": 1, reset: 1, lag: 1 },
  seed: 1,
  hangMs: 10_000,
  lagMs: 2_000,
  lagResponse: "504",
};

const faultKind = z.enum(FAULT_KINDS);

/**
 * Named fault mixes for `--fault-mix NAME`: `all` (every kind weight 1, the default) and `lag-heavy`
 * (`lag=4,hang=2,504=1,reset=1,503=1,refuse=1`: mostly effects that land but stay hidden from lookups
 * or whose answer is lost — the faults that test the settle window).
 */
export const NAMED_FAULT_MIXES: Readonly<Record<string, Readonly<Partial<Record<FaultKind, number>>>>> = {
  all: DEFAULT_FAULTS.mix,
  "lag-heavy": { lag: 4, hang: 2, "504": 1, reset: 1, "503": 1, refuse: 1 },
};

/**
 * Parses `refuse=1,503=1,hang=1` into weights, or a name of {@link NAMED_FAULT_MIXES}.
 * @throws ZodError on unknown kinds or bad numbers.
 */
export function parseFaultMix(text: string): Partial<Record<FaultKind, number>> {
  const named = Object.hasOwn(NAMED_FAULT_MIXES, text.trim()) ? NAMED_FAULT_MIXES[text.trim()] : undefined;
  if (named) return { ...named };
  const mix: Partial<Record<FaultKind, number>> = {};
  for (const part of text.split(",").filter((p) => p.trim() !== "")) {
    const [k = "", w = "1"] = part.split("=").map((x) => x.trim());
    const weight = z.coerce.number().finite().nonnegative().parse(w);
    mix[faultKind.parse(k)] = weight;
  }
  return mix;
}

/** Validates a (partial) fault configuration, filling defaults. */
export const faultConfigSchema = z.object({
  rate: z.number().min(0).max(1).default(DEFAULT_FAULTS.rate),
  mix: z.partialRecord(faultKind, z.number().nonnegative()).default(DEFAULT_FAULTS.mix),
  seed: z.number().int().default(DEFAULT_FAULTS.seed),
  hangMs: z.number().int().nonnegative().default(DEFAULT_FAULTS.hangMs),
  lagMs: z.number().int().nonnegative().default(DEFAULT_FAULTS.lagMs),
  lagResponse: z.enum(["ok", "504", "hang"]).default(DEFAULT_FAULTS.lagResponse),
});

/** Draws faults for one stream of write requests, deterministically from the seed. */
export class FaultPlanner {
  private readonly rng: () => number;

  constructor(
    private readonly config: FaultConfig,
    seed: number,
  ) {
    this.rng = mulberry32(seed);
  }

  /** The fault for the next write request, or undefined. */
  next(): FaultKind | undefined {
    const { rate, mix } = this.config;
    if (rate <= 0) return undefined;
    if (this.rng() >= rate) return undefined;
    const kinds = FAULT_KINDS.filter((k) => (mix[k] ?? 0) > 0);
    const total = kinds.reduce((s, k) => s + (mix[k] ?? 0), 0);
    if (total <= 0) return undefined;
    let r = this.rng() * total;
    for (const k of kinds) {
      r -= mix[k] ?? 0;
      if (r < 0) return k;
    }
    return kinds[kinds.length - 1];
  }
}
