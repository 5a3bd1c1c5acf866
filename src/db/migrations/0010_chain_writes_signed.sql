ALTER TABLE "chain_writes" DROP CONSTRAINT "chain_writes_kind";--> statement-breakpoint
ALTER TABLE "chain_writes" ADD CONSTRAINT "chain_writes_kind" CHECK (kind IN ('signed', 'write', 'filler'));