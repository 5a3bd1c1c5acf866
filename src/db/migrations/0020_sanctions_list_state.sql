CREATE TABLE "sanctions_list_state" (
	"id" text PRIMARY KEY NOT NULL,
	"source" text NOT NULL,
	"list_date" text,
	"entries" integer NOT NULL,
	"synced_at" timestamp with time zone NOT NULL,
	"last_attempt_at" timestamp with time zone NOT NULL,
	"last_error" text
);
