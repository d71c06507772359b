-- CreateTable
CREATE TABLE "destination_circuits" (
    "origin" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'closed',
    "consecutive_failures" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "opened_at" TIMESTAMPTZ(6),
    "probe_at" TIMESTAMPTZ(3),
    "closed_at" TIMESTAMPTZ(6),
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "destination_circuits_pkey" PRIMARY KEY ("origin")
);

-- CreateTable
CREATE TABLE "destination_circuit_openings" (
    "id" UUID NOT NULL DEFAULT gen_random_uuid(),
    "origin" TEXT NOT NULL,
    "opened_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "closed_at" TIMESTAMPTZ(3),
    "failures" INTEGER NOT NULL,
    "last_error" TEXT,

    CONSTRAINT "destination_circuit_openings_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "destination_circuits_state_idx" ON "destination_circuits"("state");

-- CreateIndex
CREATE INDEX "destination_circuit_openings_origin_closed_at_idx" ON "destination_circuit_openings"("origin", "closed_at");

-- CreateIndex
CREATE INDEX "destination_circuit_openings_opened_at_idx" ON "destination_circuit_openings"("opened_at");


-- A circuit is closed, open or half-open (one probe out).
ALTER TABLE "destination_circuits" ADD CONSTRAINT "destination_circuits_state_check" CHECK ("state" IN ('closed', 'open', 'half_open'));
