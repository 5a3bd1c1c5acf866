CREATE TABLE "service_clock" (
	"singleton" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"offset_seconds" bigint NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "service_clock_singleton" CHECK ("service_clock"."singleton"),
	CONSTRAINT "service_clock_never_backwards" CHECK ("service_clock"."offset_seconds" >= 0)
);
--> statement-breakpoint
-- The service's time: the real time plus the dev clock's offset (zero without a row, as in live mode).
-- STABLE: one value per statement, like now(); TypeScript reads the same time from database.clock.
CREATE FUNCTION clock_now() RETURNS timestamp with time zone LANGUAGE sql STABLE AS $$
	SELECT now() + make_interval(secs => coalesce((SELECT offset_seconds FROM service_clock), 0))
$$;
