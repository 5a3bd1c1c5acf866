ALTER TABLE "escrows" DROP CONSTRAINT "escrows_status";--> statement-breakpoint
ALTER TABLE "escrows" ALTER COLUMN "status" SET DEFAULT 'funding';--> statement-breakpoint
ALTER TABLE "escrows" ADD COLUMN "lease_until" timestamp with time zone;--> statement-breakpoint
CREATE INDEX "escrows_poster_recent_idx" ON "escrows" USING btree ("poster_authorization_id","created_at");--> statement-breakpoint
ALTER TABLE "escrows" ADD CONSTRAINT "escrows_status" CHECK (status IN ('funding', 'funding_failed', 'posted', 'delivered', 'validating', 'settled', 'rejected_refunded', 'expired_refunded'));