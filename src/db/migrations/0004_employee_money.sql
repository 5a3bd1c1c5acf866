CREATE TABLE "bridge_sandbox_objects" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"idempotency_key" text,
	"data" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "bridge_sandbox_objects_kind" CHECK (kind IN ('customer', 'external_account', 'transfer', 'card'))
);
--> statement-breakpoint
ALTER TABLE "advances" ADD COLUMN "failure_reason" text;--> statement-breakpoint
ALTER TABLE "bank_accounts" ADD COLUMN "last4" text;--> statement-breakpoint
ALTER TABLE "offramp_transfers" ADD COLUMN "source_address" text;--> statement-breakpoint
ALTER TABLE "offramp_transfers" ADD COLUMN "deposit_address" text;--> statement-breakpoint
CREATE UNIQUE INDEX "bridge_sandbox_objects_idempotency_key" ON "bridge_sandbox_objects" USING btree ("kind","idempotency_key");--> statement-breakpoint
CREATE UNIQUE INDEX "cards_one_live_per_employee" ON "cards" USING btree ("employee_id") WHERE status NOT IN ('canceled', 'failed');--> statement-breakpoint
ALTER TABLE "advances" ADD CONSTRAINT "advances_status" CHECK (status IN ('pending', 'claimed', 'failed'));