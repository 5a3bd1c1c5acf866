ALTER TABLE "payroll_runs" ADD COLUMN "raw_transaction" text;--> statement-breakpoint
ALTER TABLE "payroll_runs" ADD COLUMN "submitted_by" text;--> statement-breakpoint
CREATE UNIQUE INDEX "employers_agent_key_hash_key" ON "employers" USING btree ("agent_key_hash");--> statement-breakpoint
ALTER TABLE "payroll_runs" ADD CONSTRAINT "payroll_runs_submitted_by" CHECK (submitted_by IN ('owner', 'agent'));