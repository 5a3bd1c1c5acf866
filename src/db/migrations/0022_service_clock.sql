CREATE TABLE "service_clock" (
	"singleton" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"offset_seconds" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "service_clock_singleton" CHECK ("service_clock"."singleton"),
	CONSTRAINT "service_clock_never_backwards" CHECK ("service_clock"."offset_seconds" >= 0)
);
--> statement-breakpoint
-- The service's time: the real time plus the dev clock's offset, written into the body as a constant
-- by each advance (src/clock/clock.ts), so the planner inlines it like now() (a lookup of
-- service_clock here cost 4 us on every row a WHERE clause filtered). STABLE: one value per statement.
CREATE FUNCTION clock_now() RETURNS timestamp with time zone LANGUAGE sql STABLE AS $$
	SELECT now() + interval '0 seconds'
$$;
