CREATE TABLE "payroll_batches" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"run_id" uuid NOT NULL,
	"seq" integer NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"recipient_count" integer NOT NULL,
	"total_amount" numeric(78, 0) NOT NULL,
	"claim_token" uuid,
	"claimed_at" timestamp with time zone,
	"tx_hash" text,
	"raw_transaction" text,
	"block_number" bigint,
	"failure_reason" text,
	"finalized_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "payroll_batches_status" CHECK (status IN ('pending', 'submitted', 'confirmed', 'failed')),
	CONSTRAINT "payroll_batches_recipient_count_positive" CHECK ("payroll_batches"."recipient_count" > 0)
);
--> statement-breakpoint
ALTER TABLE "payroll_runs" DROP CONSTRAINT "payroll_runs_status";--> statement-breakpoint
ALTER TABLE "payment_items" ADD COLUMN "batch_seq" integer;--> statement-breakpoint
ALTER TABLE "payroll_batches" ADD CONSTRAINT "payroll_batches_run_id_payroll_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."payroll_runs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "payroll_batches_run_seq_key" ON "payroll_batches" USING btree ("run_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "payroll_batches_tx_hash_key" ON "payroll_batches" USING btree ("tx_hash");--> statement-breakpoint
-- Runs executed before batches: their one transaction becomes batch 0.
INSERT INTO "payroll_batches" ("run_id", "seq", "status", "recipient_count", "total_amount", "tx_hash", "raw_transaction", "block_number", "failure_reason", "finalized_at", "created_at", "updated_at")
SELECT r."id", 0, CASE r."status" WHEN 'draft' THEN 'pending' ELSE r."status" END, t."count", t."total", r."tx_hash", r."raw_transaction", r."block_number", r."failure_reason", r."finalized_at", coalesce(r."submitted_at", r."created_at"), r."updated_at"
FROM "payroll_runs" r
JOIN (SELECT "run_id", count(*)::integer AS "count", sum("amount") AS "total" FROM "payment_items" WHERE "chain" = 'tempo' GROUP BY "run_id") t ON t."run_id" = r."id"
WHERE r."tx_hash" IS NOT NULL;--> statement-breakpoint
UPDATE "payment_items" SET "batch_seq" = 0 WHERE "chain" = 'tempo' AND "run_id" IN (SELECT "run_id" FROM "payroll_batches");--> statement-breakpoint
ALTER TABLE "payroll_runs" DROP COLUMN "raw_transaction";--> statement-breakpoint
ALTER TABLE "payroll_runs" ADD CONSTRAINT "payroll_runs_status" CHECK (status IN ('draft', 'submitted', 'confirmed', 'failed', 'partially_paid'));