/**
 * The executor's catalog in a campaign (`TRISTATE_CONFIG` of each replica): the τ-bench tools
 * against the campaign's domain service. The campaign passes the service's URL and the fault
 * timing the service can show (from which every probe-able write tool's settle window follows) in
 * `TRISTATE_CHAOS_SERVICE_URL` and `TRISTATE_CHAOS_TIMING` (JSON `{ rate, mix, lagMs }`).
 */

import { resolveRealism } from "@tristate/example-tau-bench";
import { tauBenchTools } from "@tristate/example-tau-bench/catalog";

const baseUrl = process.env.TRISTATE_CHAOS_SERVICE_URL;
const timing = process.env.TRISTATE_CHAOS_TIMING;
if (!baseUrl || !timing) throw new Error("TRISTATE_CHAOS_SERVICE_URL and TRISTATE_CHAOS_TIMING must be set");

export default {
  tools: tauBenchTools({ baseUrl, realism: resolveRealism("mixed"), timing: { faults: JSON.parse(timing) } }),
};
