/** Test helpers for `@tristate/core` and stores that implement its port. Not for production use. */

export { FakeClock } from "./fake-clock.ts";
export {
  type FakeEffect,
  type FakeRemote,
  type FakeRemoteOptions,
  type Fault,
  startFakeRemote,
} from "./fake-remote.ts";
export { refundArgs, refundTool } from "./refund-tool.ts";
export { describeIntentStoreContract, type StoreUnderTest } from "./intent-store-contract.ts";
