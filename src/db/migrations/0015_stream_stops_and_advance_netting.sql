CREATE TABLE "stream_stops" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"employee_id" uuid NOT NULL,
	"employer_id" uuid NOT NULL,
	"wallet_address" text NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"tx_hashes" text[] DEFAULT '{}' NOT NULL,
	"tx_hash" text,
	"amount" numeric(78, 0),
	"last_error" text,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"stopped_at" timestamp with time zone,
	CONSTRAINT "stream_stops_status" CHECK (status IN ('pending', 'stopped', 'failed'))
);
--> statement-breakpoint
ALTER TABLE "advances" ADD COLUMN "netted_run_id" uuid;--> statement-breakpoint
ALTER TABLE "payment_items" ADD COLUMN "advance_deduction" numeric(78, 0) DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "stream_stops" ADD CONSTRAINT "stream_stops_employee_id_employees_id_fk" FOREIGN KEY ("employee_id") REFERENCES "public"."employees"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "stream_stops" ADD CONSTRAINT "stream_stops_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "stream_stops_due_idx" ON "stream_stops" USING btree ("next_attempt_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "stream_stops_wallet_idx" ON "stream_stops" USING btree ("wallet_address") WHERE status = 'pending';--> statement-breakpoint
ALTER TABLE "advances" ADD CONSTRAINT "advances_netted_run_id_payroll_runs_id_fk" FOREIGN KEY ("netted_run_id") REFERENCES "public"."payroll_runs"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "advances_to_net_idx" ON "advances" USING btree ("employee_id") WHERE status = 'claimed' AND netted_run_id IS NULL;--> statement-breakpoint
ALTER TABLE "payment_items" ADD CONSTRAINT "payment_items_advance_deduction_nonnegative" CHECK ("payment_items"."advance_deduction" >= 0);