CREATE TABLE "card_sandbox_payment_intents" (
	"id" text PRIMARY KEY NOT NULL,
	"idempotency_key" text NOT NULL,
	"token_id" text NOT NULL,
	"amount" numeric(78, 0) NOT NULL,
	"currency" text NOT NULL,
	"status" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"refunded_at" timestamp with time zone,
	CONSTRAINT "card_sandbox_payment_intents_status" CHECK (status IN ('succeeded', 'refunded'))
);
--> statement-breakpoint
CREATE TABLE "card_sandbox_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"payment_method" text NOT NULL,
	"currency" text NOT NULL,
	"max_amount" numeric(78, 0) NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "card_sandbox_tokens_max_amount_positive" CHECK ("card_sandbox_tokens"."max_amount" > 0)
);
--> statement-breakpoint
ALTER TABLE "card_sandbox_payment_intents" ADD CONSTRAINT "card_sandbox_payment_intents_token_id_card_sandbox_tokens_id_fk" FOREIGN KEY ("token_id") REFERENCES "public"."card_sandbox_tokens"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "card_sandbox_payment_intents_idempotency_key" ON "card_sandbox_payment_intents" USING btree ("idempotency_key");--> statement-breakpoint
CREATE UNIQUE INDEX "card_sandbox_payment_intents_token_key" ON "card_sandbox_payment_intents" USING btree ("token_id");