import { MemoryIntentStore } from "./memory-intent-store.ts";
import { describeIntentStoreContract } from "./testing/intent-store-contract.ts";

describeIntentStoreContract("MemoryIntentStore", async () => ({
  store: new MemoryIntentStore(),
  cleanup: async () => {},
}));
