import { describeExecutorScenarios } from "@tristate/testing";
import { MemoryIntentStore } from "./memory-intent-store.ts";

describeExecutorScenarios("executor on MemoryIntentStore", async () => ({
  store: new MemoryIntentStore(),
  cleanup: async () => {},
}));
