-- CreateEnum
CREATE TYPE "IntentStatus" AS ENUM ('PENDING', 'SUCCEEDED', 'FAILED_NO_EFFECT', 'UNKNOWN');

-- CreateEnum
CREATE TYPE "Resolution" AS ENUM ('found', 'absent_resent', 'human_confirmed_effect', 'human_confirmed_no_effect', 'human_resent', 'needs_human');

-- CreateEnum
CREATE TYPE "IntentEventType" AS ENUM ('created', 'sent', 'outcome', 'lease_expired', 'probe', 'resend', 'conflict', 'needs_human', 'sweep', 'human_action');

-- CreateTable
CREATE TABLE "intent_records" (
    "key" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "step_id" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "args" JSONB NOT NULL,
    "identity" JSONB NOT NULL,
    "status" "IntentStatus" NOT NULL,
    "attempt" INTEGER NOT NULL,
    "deadline_at" TIMESTAMPTZ(3) NOT NULL,
    "result" JSONB,
    "error" JSONB,
    "compensation" JSONB,
    "resolution" "Resolution",
    "needs_human" BOOLEAN NOT NULL DEFAULT false,
    "reconcile_sweeps" INTEGER NOT NULL DEFAULT 0,
    "version" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3),
    "trace_id" TEXT,

    CONSTRAINT "intent_records_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "intent_events" (
    "id" BIGSERIAL NOT NULL,
    "key" TEXT NOT NULL,
    "type" "IntentEventType" NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "data" JSONB NOT NULL,

    CONSTRAINT "intent_events_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "intent_records_status_idx" ON "intent_records"("status");

-- CreateIndex
CREATE INDEX "intent_records_status_deadline_idx" ON "intent_records"("status", "deadline_at");

-- CreateIndex
CREATE INDEX "intent_records_tool_created_idx" ON "intent_records"("tool", "created_at");

-- CreateIndex
CREATE INDEX "intent_records_needs_human_idx" ON "intent_records"("needs_human");

-- CreateIndex
CREATE INDEX "intent_records_run_idx" ON "intent_records"("run_id");

-- CreateIndex
CREATE UNIQUE INDEX "intent_records_run_step_tool_key" ON "intent_records"("run_id", "step_id", "tool");

-- CreateIndex
CREATE INDEX "intent_events_key_id_idx" ON "intent_events"("key", "id");

-- AddForeignKey
ALTER TABLE "intent_events" ADD CONSTRAINT "intent_events_key_fkey" FOREIGN KEY ("key") REFERENCES "intent_records"("key") ON DELETE CASCADE ON UPDATE CASCADE;
