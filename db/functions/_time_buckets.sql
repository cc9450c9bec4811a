-- _time_buckets: the search projection's time-bucket keys for p_sent_at, in
-- UTC: its hour (hours since 2000-01-01, key 2 * hour) and its day (days
-- since 2000-01-01, key 2 * day + 1), as an array because int8 has no GIN
-- operator class in the core and int8[] has. The projection's text index
-- holds them beside the document, so "the matches of these terms in these
-- hours" is one index scan that yields only those hours' matches; a long
-- stretch is named by its whole days (one key a day), its ends by hours.
-- _newest_matches walks the hours newest first (docs/benchmarks.md, "Issue
-- 16: the time-bucketed text index"). Changing it means rebuilding
-- message_search_documents_document_idx. No SET clause and no STRICT, so that
-- PostgreSQL inlines it; every name in it is schema-qualified instead.
CREATE OR REPLACE FUNCTION history._time_buckets(p_sent_at timestamptz)
RETURNS bigint[]
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT ARRAY[
        -- the hour: 2 * (days * 24 + hour of the day)
        2 OPERATOR(pg_catalog.*) ((pg_catalog.timezone('UTC', p_sent_at)::pg_catalog.date OPERATOR(pg_catalog.-) '2000-01-01'::pg_catalog.date)::bigint
                                  OPERATOR(pg_catalog.*) 24 OPERATOR(pg_catalog.+) pg_catalog.date_part('hour', pg_catalog.timezone('UTC', p_sent_at))::bigint),
        -- the day: 2 * days + 1
        2 OPERATOR(pg_catalog.*) (pg_catalog.timezone('UTC', p_sent_at)::pg_catalog.date OPERATOR(pg_catalog.-) '2000-01-01'::pg_catalog.date)::bigint OPERATOR(pg_catalog.+) 1]
$function$;

COMMENT ON FUNCTION history._time_buckets(timestamptz) IS
    'Internal: the projection''s time-bucket keys (UTC hour and day since 2000-01-01, as GIN keys)';
REVOKE ALL ON FUNCTION history._time_buckets(timestamptz) FROM PUBLIC;
