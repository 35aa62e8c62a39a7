/**
 * `@tristate/testing`: the test fakes and contract suites of Tristate — a fake clock, socket
 * cleanup, the intent-store contract suite a store implementer runs, and the executor scenarios
 * run against any store. Dev-only: production code never imports it (the contract suites load
 * vitest). The fake remote services are the executor's demo code (`@tristate/executor/demo-remotes`),
 * re-exported here for tests. A fresh PostgreSQL database per test file: `@tristate/testing/postgres`
 * (`@tristate/db`'s `createTestDatabase` uses it with Tristate's migrations).
 *
 * @example
 * ```ts
 * import { MemoryIntentStore } from "@tristate/core";
 * import { describeIntentStoreContract } from "@tristate/testing";
 *
 * describeIntentStoreContract("memory", async () => ({ store: new MemoryIntentStore(), cleanup: async () => {} }));
 * ```
 * @module
 */

export {
  type FakeEffect,
  type FakeRemote,
  type FakeRemoteOptions,
  type Fault,
  listenLoopback,
  refundArgs,
  refundTool,
  type SeenRequest,
  startFakeRemote,
  startTripServices,
  TRIP_ENDPOINTS,
  TRIP_TOOL_TIMEOUT_MS,
  type TripEffect,
  type TripEndpoint,
  type TripFault,
  type TripServices,
  type TripToolName,
  type TripToolOverrides,
  tripTools,
} from "@tristate/executor/demo-remotes";
export { Cleanup } from "./cleanup.ts";
export { describeExecutorScenarios } from "./executor-scenarios.ts";
export { FakeClock } from "./fake-clock.ts";
export { describeIntentStoreContract, type StoreUnderTest } from "./intent-store-contract.ts";
