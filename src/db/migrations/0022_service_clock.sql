-- The service's time (src/clock/clock.ts): the real time plus local mode's dev clock offset. The
-- offset is a constant in the body, which each advance rewrites, so the planner inlines it like
-- now() (a table lookup here cost 4 us on every row a WHERE clause filtered). Live mode never
-- rewrites it. STABLE: one value per statement.
CREATE FUNCTION clock_now() RETURNS timestamp with time zone LANGUAGE sql STABLE AS $$
	SELECT now() + interval '0 seconds'
$$;
