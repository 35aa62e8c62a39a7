// A store implementer's test file: the port's contract, run against a backend. Swap in your own store
// (`@tristate/db` runs this suite against PostgreSQL). Run: `pnpm --filter @tristate/core exec vitest run examples`.
import { type IntentStore, MemoryIntentStore, systemClock } from "@tristate/core/store";
import { describeIntentStoreContract } from "@tristate/testing";

describeIntentStoreContract("MemoryIntentStore (the reference store)", async () => {
  // The store's clock judges leases (rule 9): PostgreSQL's now(), here the system clock.
  const store: IntentStore = new MemoryIntentStore({ clock: systemClock });
  return { store, cleanup: async () => {} };
});
