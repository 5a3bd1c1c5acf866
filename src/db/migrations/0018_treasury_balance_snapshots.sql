CREATE TABLE "treasury_balance_snapshots" (
	"employer_id" uuid NOT NULL,
	"day" date NOT NULL,
	"available" numeric(78, 0) NOT NULL,
	"locked" numeric(78, 0) NOT NULL,
	"observed_at" timestamp with time zone NOT NULL,
	CONSTRAINT "treasury_balance_snapshots_employer_id_day_pk" PRIMARY KEY("employer_id","day"),
	CONSTRAINT "treasury_balance_snapshots_available_nonnegative" CHECK ("treasury_balance_snapshots"."available" >= 0),
	CONSTRAINT "treasury_balance_snapshots_locked_nonnegative" CHECK ("treasury_balance_snapshots"."locked" >= 0)
);
--> statement-breakpoint
ALTER TABLE "treasury_balance_snapshots" ADD CONSTRAINT "treasury_balance_snapshots_employer_id_employers_id_fk" FOREIGN KEY ("employer_id") REFERENCES "public"."employers"("id") ON DELETE no action ON UPDATE no action;