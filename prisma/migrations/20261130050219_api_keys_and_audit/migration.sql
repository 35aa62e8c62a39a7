-- CreateEnum
CREATE TYPE "ApiKeyRole" AS ENUM ('agent', 'viewer', 'operator', 'admin');

-- CreateTable
CREATE TABLE "api_keys" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "role" "ApiKeyRole" NOT NULL,
    "hash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "last_used_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "api_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_entries" (
    "id" BIGSERIAL NOT NULL,
    "operator_action_id" TEXT NOT NULL,
    "actor_key_id" TEXT NOT NULL,
    "actor_name" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "action" TEXT NOT NULL,
    "note" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "before" JSONB NOT NULL,
    "after" JSONB NOT NULL,

    CONSTRAINT "audit_entries_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys"("hash");

-- CreateIndex
CREATE UNIQUE INDEX "audit_entries_operator_action_id_key" ON "audit_entries"("operator_action_id");

-- CreateIndex
CREATE INDEX "audit_entries_at_idx" ON "audit_entries"("at");

-- CreateIndex
CREATE INDEX "audit_entries_key_idx" ON "audit_entries"("key");

-- CreateIndex
CREATE INDEX "audit_entries_actor_at_idx" ON "audit_entries"("actor_key_id", "at");
