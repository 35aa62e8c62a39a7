/**
 * The example remotes' fault switch (`TRISTATE_DEMO_FAULTS`, `TRISTATE_DEMO_FAULTS_SEED`): random
 * faults at chosen rates on `POST /effects`, so `npm start` and `pnpm demo` show all three outcomes
 * (SUCCEEDED, FAILED_NO_EFFECT, UNKNOWN) and the reconciliation of the UNKNOWNs. Effects stay
 * correct: a fault never makes a remote apply an effect twice (a remote that honours
 * `Idempotency-Key` still dedupes by it), it only loses or delays the answer.
 */
/**
 * The injectable faults, each with what the remote does and what the caller sees:
 * - `timeout-after-commit`: applies the effect, then holds the answer past the caller's timeout.
 * - `reset-before-commit`: resets the connection before applying anything (no effect).
 * - `reset-after-commit`: applies the effect, then resets the connection (no answer byte).
 * - `504-after-commit`: applies the effect, then answers 504 Gateway Timeout.
 * - `lag`: applies the effect but lookups (key and identity probes) see it only {@link DEMO_LAG_MS}
 *   later, and the answer is lost (504): reconciliation must wait for it.
 */
export const DEMO_FAULT_KINDS = [
  "timeout-after-commit",
  "reset-before-commit",
  "reset-after-commit",
  "504-after-commit",
  "lag",
] as const;
/** One fault kind of {@link DEMO_FAULT_KINDS}. */
export type DemoFaultKind = (typeof DEMO_FAULT_KINDS)[number];

/** How long a `lag` fault hides the effect from lookups, ms. */
export const DEMO_LAG_MS = 1500;

/**
 * The rates `TRISTATE_DEMO_FAULTS=on` stands for: about one POST in five gets a fault (the switch's
 * suggested setting, which `npm start` prints and `pnpm demo` uses by default).
 */
export const DEMO_FAULTS_ON =
  "timeout-after-commit=0.05,reset-before-commit=0.05,reset-after-commit=0.03,504-after-commit=0.04,lag=0.05";

/** Parsed fault switch: the probability (0–1) of each kind per POST; an empty object is "off". */
export type DemoFaultRates = Partial<Record<DemoFaultKind, number>>;

/** A bad `TRISTATE_DEMO_FAULTS` or `TRISTATE_DEMO_FAULTS_SEED`; the message names the setting and the rule. */
export class DemoFaultsError extends Error {
  override name = "DemoFaultsError";
}

const RATE = /^(?:0(?:\.\d+)?|1(?:\.0+)?|\.\d+)$/;

/**
 * Parses `TRISTATE_DEMO_FAULTS`: empty, unset or `off` → no faults; `on` → {@link DEMO_FAULTS_ON};
 * else a comma list of `<kind>=<rate>` with kinds from {@link DEMO_FAULT_KINDS}, each at most once,
 * rates decimals from 0 to 1 adding up to at most 1 (e.g. `timeout-after-commit=0.1,lag=0.05`).
 * @throws DemoFaultsError naming `TRISTATE_DEMO_FAULTS` and the rule broken.
 */
export function parseDemoFaults(text: string | undefined): DemoFaultRates {
  const value = (text ?? "").trim();
  if (value === "" || value === "off") return {};
  if (value === "on") return parseDemoFaults(DEMO_FAULTS_ON);
  const rates: DemoFaultRates = {};
  let total = 0;
  for (const raw of value.split(",")) {
    const part = raw.trim();
    const match = /^([^=\s]+)\s*=\s*(\S+)$/.exec(part);
    if (!match) {
      throw new DemoFaultsError(
        `TRISTATE_DEMO_FAULTS: "${part}" is not <kind>=<rate> (e.g. timeout-after-commit=0.1); or use "on" or "off"`,
      );
    }
    const [, kind = "", rate = ""] = match;
    if (!(DEMO_FAULT_KINDS as readonly string[]).includes(kind)) {
      throw new DemoFaultsError(
        `TRISTATE_DEMO_FAULTS: unknown fault "${kind}"; the kinds are ${DEMO_FAULT_KINDS.join(", ")}`,
      );
    }
    if (Object.hasOwn(rates, kind)) throw new DemoFaultsError(`TRISTATE_DEMO_FAULTS: "${kind}" is given twice`);
    if (!RATE.test(rate)) {
      throw new DemoFaultsError(
        `TRISTATE_DEMO_FAULTS: the rate of "${kind}" must be a decimal from 0 to 1, not "${rate}"`,
      );
    }
    rates[kind as DemoFaultKind] = Number(rate);
    total += Number(rate);
  }
  if (total > 1 + 1e-9) {
    throw new DemoFaultsError(`TRISTATE_DEMO_FAULTS: the rates add up to ${+total.toFixed(6)}; at most 1 is allowed`);
  }
  return rates;
}

/**
 * Parses `TRISTATE_DEMO_FAULTS_SEED`: unset or empty → null (unseeded: `Math.random`); else an
 * integer from 0 to 4294967295.
 * @throws DemoFaultsError naming `TRISTATE_DEMO_FAULTS_SEED` and the rule.
 */
export function parseDemoFaultsSeed(text: string | undefined): number | null {
  const value = (text ?? "").trim();
  if (value === "") return null;
  if (!/^\d{1,10}$/.test(value) || Number(value) > 0xffff_ffff) {
    throw new DemoFaultsError(`TRISTATE_DEMO_FAULTS_SEED: must be an integer from 0 to 4294967295, not "${value}"`);
  }
  return Number(value);
}

/** The switch read from the environment: the rates and the seed (null: unseeded). */
export interface DemoFaultSettings {
  rates: DemoFaultRates;
  seed: number | null;
}

/**
 * Reads `TRISTATE_DEMO_FAULTS` and `TRISTATE_DEMO_FAULTS_SEED` from `env`.
 * @throws DemoFaultsError naming the setting and the rule when either is invalid.
 */
export function demoFaultsFromEnv(env: Record<string, string | undefined>): DemoFaultSettings {
  return { rates: parseDemoFaults(env.TRISTATE_DEMO_FAULTS), seed: parseDemoFaultsSeed(env.TRISTATE_DEMO_FAULTS_SEED) };
}

/** One line describing the switch's state, e.g. for `npm start`'s banner. */
export function describeDemoFaults(rates: DemoFaultRates): string {
  const on = DEMO_FAULT_KINDS.filter((k) => (rates[k] ?? 0) > 0);
  if (!on.length) return "off";
  return on.map((k) => `${k} ${+((rates[k] ?? 0) * 100).toFixed(2)} %`).join(", ");
}

/** A seeded uniform source in [0, 1) (mulberry32, as the τ-bench service's faults use). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Draws the fault (or none) of each POST: one uniform draw per POST, split by the rates in the order
 * of {@link DEMO_FAULT_KINDS}. Seeded (`seed` an integer): the same sequence every run.
 * @returns a function answering the next POST's kind, or undefined for no fault.
 */
export function demoFaultPicker(rates: DemoFaultRates, seed: number | null = null): () => DemoFaultKind | undefined {
  const random = seed === null ? Math.random : seeded(seed);
  return () => {
    let r = random();
    for (const kind of DEMO_FAULT_KINDS) {
      r -= rates[kind] ?? 0;
      if (r < 0) return kind;
    }
    return undefined;
  };
}
