import { MemoryIntentStore } from "./memory-intent-store.ts";
import { describeExecutorScenarios } from "./testing/executor-scenarios.ts";

describeExecutorScenarios("executor on MemoryIntentStore", async () => ({
  store: new MemoryIntentStore(),
  cleanup: async () => {},
}));
