-- AlterEnum
ALTER TYPE "IntentEventType" ADD VALUE 'late_answer';

-- AlterTable
ALTER TABLE "intent_records" ADD COLUMN     "sent_key" TEXT,
ADD COLUMN     "settles_at" TIMESTAMPTZ(3);
