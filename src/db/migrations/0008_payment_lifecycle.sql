ALTER TABLE "payments" DROP CONSTRAINT "payments_status";--> statement-breakpoint
ALTER TABLE "advances" ADD COLUMN "fee_payment_id" uuid;--> statement-breakpoint
ALTER TABLE "agent_signature_replays" ADD COLUMN "fee_payment_id" uuid;--> statement-breakpoint
ALTER TABLE "escrows" ADD COLUMN "delivery_fee_payment_id" uuid;--> statement-breakpoint
ALTER TABLE "offramp_transfers" ADD COLUMN "fee_payment_id" uuid;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "proof_hash" text;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "request_hash" text;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "trace" jsonb;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "settlement" jsonb;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "lease_until" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "refund_reference" text;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "refund_attempt" jsonb;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "served_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "payments" ADD COLUMN "refunded_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "payroll_runs" ADD COLUMN "fee_payment_id" uuid;--> statement-breakpoint
CREATE UNIQUE INDEX "advances_fee_payment_id_key" ON "advances" USING btree ("fee_payment_id") WHERE fee_payment_id IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "agent_pay_calls_fee_payment_id_key" ON "agent_pay_calls" USING btree ("fee_payment_id") WHERE fee_payment_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "agent_registrations_fee_payment_idx" ON "agent_registrations" USING btree ("fee_payment_id");--> statement-breakpoint
CREATE UNIQUE INDEX "escrows_fee_payment_id_key" ON "escrows" USING btree ("fee_payment_id") WHERE fee_payment_id IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "escrows_delivery_fee_payment_id_key" ON "escrows" USING btree ("delivery_fee_payment_id") WHERE delivery_fee_payment_id IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "offramp_transfers_fee_payment_id_key" ON "offramp_transfers" USING btree ("fee_payment_id") WHERE fee_payment_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "payments_proof_hash_idx" ON "payments" USING btree ("proof_hash");--> statement-breakpoint
CREATE INDEX "payments_open_idx" ON "payments" USING btree ("lease_until") WHERE status IN ('claimed', 'settled', 'unknown', 'refunding');--> statement-breakpoint
CREATE UNIQUE INDEX "payroll_runs_fee_payment_id_key" ON "payroll_runs" USING btree ("fee_payment_id") WHERE fee_payment_id IS NOT NULL;--> statement-breakpoint
ALTER TABLE "payments" ADD CONSTRAINT "payments_status" CHECK (status IN ('claimed', 'settled', 'served', 'voided', 'unknown', 'refunding', 'refunded'));--> statement-breakpoint
-- Before this migration a settled payment was a served one ("settled" now means "paid, not yet answered").
UPDATE "payments" SET "status" = 'served', "served_at" = "settled_at" WHERE "status" = 'settled';
