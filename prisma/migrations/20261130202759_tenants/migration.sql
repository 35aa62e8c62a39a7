-- Tenancy (issue 10): every intent record, event, run plan and audit row belongs to a tenant, first in
-- every key and index. Existing rows (made before tenants existed) move to `default`: the column is
-- added with that default, which is dropped again so that every later write names its tenant.

-- DropForeignKey
ALTER TABLE "intent_events" DROP CONSTRAINT "intent_events_key_fkey";

-- DropIndex
DROP INDEX "audit_entries_actor_at_idx";

-- DropIndex
DROP INDEX "audit_entries_at_idx";

-- DropIndex
DROP INDEX "audit_entries_key_idx";

-- DropIndex
DROP INDEX "audit_entries_operator_action_id_key";

-- DropIndex
DROP INDEX "intent_events_key_id_idx";

-- DropIndex
DROP INDEX "intent_records_run_step_tool_key";

-- DropIndex
DROP INDEX "intent_records_status_deadline_idx";

-- DropIndex
DROP INDEX "intent_records_tool_created_idx";

-- AlterTable
ALTER TABLE "api_keys" ADD COLUMN     "tenant" TEXT NOT NULL DEFAULT 'default';

-- AlterTable
ALTER TABLE "audit_entries" ADD COLUMN     "tenant" TEXT NOT NULL DEFAULT 'default';
ALTER TABLE "audit_entries" ALTER COLUMN "tenant" DROP DEFAULT;

-- AlterTable
ALTER TABLE "intent_events" ADD COLUMN     "tenant" TEXT NOT NULL DEFAULT 'default';
ALTER TABLE "intent_events" ALTER COLUMN "tenant" DROP DEFAULT;

-- AlterTable
ALTER TABLE "intent_records" DROP CONSTRAINT "intent_records_pkey",
ADD COLUMN     "tenant" TEXT NOT NULL DEFAULT 'default',
ADD CONSTRAINT "intent_records_pkey" PRIMARY KEY ("tenant", "key");

-- AlterTable
ALTER TABLE "run_plans" DROP CONSTRAINT "run_plans_pkey",
ADD COLUMN     "tenant" TEXT NOT NULL DEFAULT 'default',
ADD CONSTRAINT "run_plans_pkey" PRIMARY KEY ("tenant", "run_id");

ALTER TABLE "intent_records" ALTER COLUMN "tenant" DROP DEFAULT;
ALTER TABLE "run_plans" ALTER COLUMN "tenant" DROP DEFAULT;

-- CreateIndex
CREATE INDEX "audit_entries_at_idx" ON "audit_entries"("tenant", "at");

-- CreateIndex
CREATE INDEX "audit_entries_key_idx" ON "audit_entries"("tenant", "key");

-- CreateIndex
CREATE INDEX "audit_entries_actor_at_idx" ON "audit_entries"("tenant", "actor_key_id", "at");

-- CreateIndex
CREATE UNIQUE INDEX "audit_entries_operator_action_id_key" ON "audit_entries"("tenant", "operator_action_id");

-- CreateIndex
CREATE INDEX "intent_events_key_id_idx" ON "intent_events"("tenant", "key", "id");

-- CreateIndex
CREATE INDEX "intent_records_status_deadline_idx" ON "intent_records"("tenant", "status", "deadline_at");

-- CreateIndex
CREATE INDEX "intent_records_tool_created_idx" ON "intent_records"("tenant", "tool", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "intent_records_run_step_tool_key" ON "intent_records"("tenant", "run_id", "step_id", "tool");

-- AddForeignKey
ALTER TABLE "intent_events" ADD CONSTRAINT "intent_events_tenant_key_fkey" FOREIGN KEY ("tenant", "key") REFERENCES "intent_records"("tenant", "key") ON DELETE CASCADE ON UPDATE CASCADE;
