CREATE TABLE "embedded_chain_journal" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"chain" text NOT NULL,
	"method" text NOT NULL,
	"params" jsonb NOT NULL,
	"block_timestamp" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "embedded_chains" (
	"chain" text PRIMARY KEY NOT NULL,
	"operator_key" text NOT NULL,
	"genesis_time" bigint NOT NULL,
	"deployment" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "embedded_chain_journal_chain_idx" ON "embedded_chain_journal" USING btree ("chain","id");