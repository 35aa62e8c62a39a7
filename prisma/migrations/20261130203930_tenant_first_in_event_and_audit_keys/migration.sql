-- AlterTable
ALTER TABLE "audit_entries" DROP CONSTRAINT "audit_entries_pkey",
ADD CONSTRAINT "audit_entries_pkey" PRIMARY KEY ("tenant", "id");

-- AlterTable
ALTER TABLE "intent_events" DROP CONSTRAINT "intent_events_pkey",
ADD CONSTRAINT "intent_events_pkey" PRIMARY KEY ("tenant", "id");
