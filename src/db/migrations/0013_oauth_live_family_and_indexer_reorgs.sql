CREATE TABLE "indexer_checkpoints" (
	"name" text NOT NULL,
	"block_number" bigint NOT NULL,
	"block_hash" text NOT NULL,
	CONSTRAINT "indexer_checkpoints_name_block_number_pk" PRIMARY KEY("name","block_number")
);
--> statement-breakpoint
ALTER TABLE "indexer_cursors" ADD COLUMN "last_block_hash" text;--> statement-breakpoint
CREATE UNIQUE INDEX "oauth_refresh_tokens_live_family_key" ON "oauth_refresh_tokens" USING btree ("family_id") WHERE revoked_at IS NULL;