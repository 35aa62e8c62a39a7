/** Test helpers for `@tristate/core` and stores that implement its port. Not for production use. */

export { Cleanup } from "./cleanup.ts";
export { describeExecutorScenarios } from "./executor-scenarios.ts";
export { FakeClock } from "./fake-clock.ts";
export {
  type FakeEffect,
  type FakeRemote,
  type FakeRemoteOptions,
  type Fault,
  type SeenRequest,
  startFakeRemote,
} from "./fake-remote.ts";
export { describeIntentStoreContract, type StoreUnderTest } from "./intent-store-contract.ts";
export { refundArgs, refundTool } from "./refund-tool.ts";
export {
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
} from "./trip-services.ts";
