import { describeIntentStoreContract } from "@tristate/testing";
import { systemClock } from "./clock.ts";
import { MemoryIntentStore } from "./memory-intent-store.ts";

describeIntentStoreContract("MemoryIntentStore", async () => ({
  // Its own clock stands in for the database's `now()`, which judges leases (rule 9).
  store: new MemoryIntentStore({ clock: systemClock }),
  cleanup: async () => {},
}));
