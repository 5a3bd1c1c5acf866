CREATE TABLE "card_credit_draws" (
	"proof_key" text PRIMARY KEY NOT NULL,
	"credit_id" uuid NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"returned_at" timestamp with time zone,
	CONSTRAINT "card_credit_draws_amount_positive" CHECK ("card_credit_draws"."amount" > 0)
);
--> statement-breakpoint
CREATE TABLE "card_credits" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"payment_intent" text NOT NULL,
	"network" text NOT NULL,
	"route" text NOT NULL,
	"holder" text NOT NULL,
	"funded" numeric(78, 0) NOT NULL,
	"remaining" numeric(78, 0) NOT NULL,
	"status" text DEFAULT 'open' NOT NULL,
	"refunded" numeric(78, 0) DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"refunded_at" timestamp with time zone,
	CONSTRAINT "card_credits_status" CHECK (status IN ('open', 'refunding', 'refunded')),
	CONSTRAINT "card_credits_remaining_within_funded" CHECK ("card_credits"."remaining" >= 0 AND "card_credits"."remaining" + "card_credits"."refunded" <= "card_credits"."funded")
);
--> statement-breakpoint
CREATE TABLE "card_sandbox_refunds" (
	"idempotency_key" text PRIMARY KEY NOT NULL,
	"payment_intent_id" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "card_sandbox_payment_intents" ADD COLUMN "amount_refunded" numeric(78, 0) DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "card_credit_draws" ADD CONSTRAINT "card_credit_draws_credit_id_card_credits_id_fk" FOREIGN KEY ("credit_id") REFERENCES "public"."card_credits"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "card_sandbox_refunds" ADD CONSTRAINT "card_sandbox_refunds_payment_intent_id_card_sandbox_payment_intents_id_fk" FOREIGN KEY ("payment_intent_id") REFERENCES "public"."card_sandbox_payment_intents"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "card_credit_draws_credit_idx" ON "card_credit_draws" USING btree ("credit_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "card_credits_payment_intent_key" ON "card_credits" USING btree ("payment_intent");--> statement-breakpoint
CREATE INDEX "card_credits_holder_idx" ON "card_credits" USING btree ("holder","created_at");--> statement-breakpoint
ALTER TABLE "card_sandbox_payment_intents" ADD CONSTRAINT "card_sandbox_payment_intents_refund_within_amount" CHECK ("card_sandbox_payment_intents"."amount_refunded" <= "card_sandbox_payment_intents"."amount");