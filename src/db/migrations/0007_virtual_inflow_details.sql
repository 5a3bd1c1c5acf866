ALTER TABLE "virtual_address_inflows" ADD COLUMN "sender_address" text;--> statement-breakpoint
ALTER TABLE "virtual_address_inflows" ADD COLUMN "block_timestamp" timestamp with time zone;