ALTER TABLE "agent_pay_calls" ADD COLUMN "idempotency_key" text;--> statement-breakpoint
ALTER TABLE "agent_pay_calls" ADD COLUMN "request_hash" text;--> statement-breakpoint
ALTER TABLE "reputation_writes" ADD COLUMN "pending_reference" text;--> statement-breakpoint
ALTER TABLE "reputation_writes" ADD COLUMN "next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "agent_pay_calls_idempotency_key" ON "agent_pay_calls" USING btree ("authorization_id","idempotency_key") WHERE idempotency_key IS NOT NULL AND status <> 'released';--> statement-breakpoint
CREATE INDEX "agent_pay_calls_reserved_idx" ON "agent_pay_calls" USING btree ("created_at") WHERE status = 'reserved';--> statement-breakpoint
CREATE INDEX "reputation_writes_due_idx" ON "reputation_writes" USING btree ("next_attempt_at") WHERE status = 'pending';