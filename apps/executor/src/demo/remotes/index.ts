/**
 * `@tristate/executor/demo-remotes`: the example remote services the demo and `npm start` run on loopback —
 * a fake payment or mail service (`startFakeRemote`: performs effects on `POST /effects`, honours
 * `Idempotency-Key` or not, answers key and identity probes, injects faults per POST), the τ-bench
 * trip services (`startTripServices`) and the tools that call them. No test framework: tests reach
 * them through `@tristate/testing`.
 *
 * @example
 * ```ts
 * import { startFakeRemote } from "@tristate/executor/demo-remotes";
 *
 * const payments = await startFakeRemote({ honorsKey: true });
 * payments.fault({ answer: "hang" }); // the next POST commits, then never answers
 * await payments.close();
 * ```
 * @module
 */

export {
  DEMO_FAULT_KINDS,
  DEMO_FAULTS_ON,
  DEMO_LAG_MS,
  type DemoFaultKind,
  type DemoFaultRates,
  type DemoFaultSettings,
  DemoFaultsError,
  demoFaultsFromEnv,
  describeDemoFaults,
  parseDemoFaults,
} from "./demo-faults.ts";
export {
  type FakeEffect,
  type FakeRemote,
  type FakeRemoteOptions,
  type Fault,
  type SeenRequest,
  startFakeRemote,
} from "./fake-remote.ts";
export { listenLoopback } from "./loopback-server.ts";
export { refundArgs, refundTool } from "./refund-tool.ts";
export {
  startTripServices,
  TRIP_ENDPOINTS,
  type TripEffect,
  type TripEndpoint,
  type TripFault,
  type TripServices,
} from "./trip-services.ts";
export { TRIP_TOOL_TIMEOUT_MS, type TripToolName, type TripToolOverrides, tripTools } from "./trip-tools.ts";
