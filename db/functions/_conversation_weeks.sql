-- _conversation_weeks: the search projection's (conversation, week) key for
-- a row of p_conversation_key sent at p_sent_at: weeks of seven UTC days
-- since 2000-01-01 (a Saturday; week w starts at hour 168 * w), key
-- conversation_key * 2^22 + week + 2^21. The projection's text index holds it
-- beside the hour and day keys, so "the matches of these terms in these
-- conversations in these weeks" reads only those conversations' postings of
-- those weeks, where the hour and day keys read every conversation's: a
-- channel holding a tenth of all messages costs a tenth as much
-- (_newest_matches, "weeks" slices). An array because int8 has no GIN
-- operator class in the core. Changing it means rebuilding
-- message_search_documents_document_idx. No SET clause and no STRICT, so that
-- PostgreSQL inlines it; every name in it is schema-qualified instead.
CREATE OR REPLACE FUNCTION history._conversation_weeks(p_conversation_key bigint, p_sent_at timestamptz)
RETURNS bigint[]
LANGUAGE sql
IMMUTABLE PARALLEL SAFE
AS $function$
    -- OPERATOR() syntax binds left to right, whatever the operator: hence the parentheses.
    SELECT ARRAY[
        (p_conversation_key OPERATOR(pg_catalog.*) 4194304)
        OPERATOR(pg_catalog.+)
        -- the week, rounded down for days before 2000 too: (days + 7e6) / 7 - 1e6
        (((pg_catalog.timezone('UTC', p_sent_at)::pg_catalog.date OPERATOR(pg_catalog.-) '2000-01-01'::pg_catalog.date)::bigint
          OPERATOR(pg_catalog.+) 7000000) OPERATOR(pg_catalog./) 7)
        OPERATOR(pg_catalog.+) (2097152 OPERATOR(pg_catalog.-) 1000000)]
$function$;

COMMENT ON FUNCTION history._conversation_weeks(bigint, timestamptz) IS
    'Internal: the projection''s (conversation, week) key (UTC weeks since 2000-01-01, as a GIN key)';
REVOKE ALL ON FUNCTION history._conversation_weeks(bigint, timestamptz) FROM PUBLIC;
