CREATE TABLE "chain_signers" (
	"chain" text NOT NULL,
	"address" text NOT NULL,
	"next_nonce" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "chain_signers_chain_address_pk" PRIMARY KEY("chain","address")
);
--> statement-breakpoint
CREATE TABLE "chain_writes" (
	"chain" text NOT NULL,
	"address" text NOT NULL,
	"nonce" bigint NOT NULL,
	"hash" text NOT NULL,
	"raw" text NOT NULL,
	"kind" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "chain_writes_chain_address_nonce_pk" PRIMARY KEY("chain","address","nonce"),
	CONSTRAINT "chain_writes_kind" CHECK (kind IN ('write', 'filler'))
);
