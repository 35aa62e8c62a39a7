-- CreateTable
CREATE TABLE "run_aborts" (
    "tenant" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "aborted_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor_key_id" TEXT NOT NULL,
    "actor_name" TEXT NOT NULL,
    "via" TEXT NOT NULL,
    "reason" TEXT NOT NULL,

    CONSTRAINT "run_aborts_pkey" PRIMARY KEY ("tenant","run_id")
);

-- CreateIndex
CREATE INDEX "run_aborts_aborted_at_idx" ON "run_aborts"("tenant", "aborted_at");
