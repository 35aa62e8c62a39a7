/**
 * Compile-time contract between the Prisma enums (`prisma/schema.prisma`, generated into
 * `src/generated/prisma/enums.ts`) and the closed TypeScript unions they store (`@tristate/core`'s
 * `statuses.ts` and `intent-store.ts`, this package's `api-key-store.ts`). `tsc -p tsconfig.json`
 * checks it (the package's typecheck), so adding a value on one side only fails the build: both
 * directions are asserted for each enum.
 */
import type { IntentEventType, IntentStatus, StoredResolution } from "@tristate/core";
import type { ApiKeyRole } from "../src/api-key-store.ts";
import type * as PrismaEnums from "../src/generated/prisma/enums.ts";
import type {
  NotificationChannelKind,
  NotificationDeliveryStatus,
  NotificationEventKind,
} from "../src/notifications/ports.ts";

/** True when A and B are assignable both ways. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Compiles only for `true`. */
type Holds<T extends true> = T;

export type PrismaEnumContract = [
  Holds<Same<PrismaEnums.IntentStatus, IntentStatus>>,
  // The stored resolutions: `needs_human` is derived from `needs_human` (the column), never stored.
  Holds<Same<PrismaEnums.Resolution, StoredResolution>>,
  Holds<Same<PrismaEnums.IntentEventType, IntentEventType>>,
  Holds<Same<PrismaEnums.ApiKeyRole, ApiKeyRole>>,
  // Notifications (issue 23 §3): the ports' closed unions.
  Holds<Same<PrismaEnums.NotificationEventKind, NotificationEventKind>>,
  Holds<Same<PrismaEnums.NotificationChannelKind, NotificationChannelKind>>,
  Holds<Same<PrismaEnums.NotificationDeliveryStatus, NotificationDeliveryStatus>>,
];
