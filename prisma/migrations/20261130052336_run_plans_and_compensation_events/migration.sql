-- AlterEnum
ALTER TYPE "IntentEventType" ADD VALUE 'compensation';

-- CreateTable
CREATE TABLE "run_plans" (
    "run_id" TEXT NOT NULL,
    "steps" JSONB NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "run_plans_pkey" PRIMARY KEY ("run_id")
);
