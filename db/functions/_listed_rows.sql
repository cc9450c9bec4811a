-- _listed_rows: an estimate of how many projection rows the conversations in
-- p_conversations hold, when the projection holds p_total. The planner's own
-- estimate (EXPLAIN of "conversation_key = ANY (...)") takes each listed
-- conversation that is not among the column's most common values to hold
-- an equal share of the rest of the rows, over ANALYZE's estimate of how
-- many conversations there are. That estimate comes from a sample (30 000
-- rows at the default statistics target) and is far too small when there
-- are many small conversations: 27 582 for the 250 000 at 10M messages, so a
-- list of 2 017 small conversations was taken to hold 448 111 rows, not the
-- 54 489 it holds, and _newest_matches sized and chose its scans for a set
-- eight times too big. Here the count of conversations (history.conversations,
-- whose statistics count every row) is a floor under that estimate; the
-- most common values count as the planner counts them. Without statistics
-- (never analysed), the planner's estimate.
-- p_relation: whose rows are estimated. On Citus, in a search delegated to the
-- tenant's worker, the tenant's shard there (history._local_shard): the
-- planner's estimate from its statistics (the distributed table's, on a
-- node, are an empty shell's, and reading them would ask every shard).
DROP FUNCTION IF EXISTS history._listed_rows(bigint[], float8);
CREATE OR REPLACE FUNCTION history._listed_rows(
    p_conversations bigint[], p_total float8,
    p_relation regclass DEFAULT 'history.message_search_documents')
RETURNS float8
LANGUAGE plpgsql
VOLATILE  -- it may ask EXPLAIN
AS $function$
DECLARE
    v_common       bigint[];  -- the most common conversation keys
    v_common_share real[];    -- the share of rows each holds
    v_null_share   real;
    v_distinct     float8;    -- ANALYZE's count of distinct conversations
    v_plan         json;
BEGIN
    IF p_relation <> 'history.message_search_documents'::pg_catalog.regclass THEN
        EXECUTE pg_catalog.format('EXPLAIN (FORMAT JSON) SELECT 1 FROM %s d WHERE d.conversation_key = ANY ($1)',
                                  p_relation)
           INTO v_plan USING p_conversations;
        RETURN greatest((v_plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8, 1);
    END IF;
    SELECT s.most_common_vals::text::bigint[], s.most_common_freqs, s.null_frac,
           CASE WHEN s.n_distinct < 0 THEN -s.n_distinct * p_total ELSE s.n_distinct END
      INTO v_common, v_common_share, v_null_share, v_distinct
      FROM pg_catalog.pg_stats s
     WHERE s.schemaname = 'history' AND s.tablename = 'message_search_documents' AND s.attname = 'conversation_key';
    IF NOT FOUND THEN
        EXECUTE 'EXPLAIN (FORMAT JSON) SELECT 1 FROM history.message_search_documents d WHERE d.conversation_key = ANY ($1)'
           INTO v_plan USING p_conversations;
        RETURN greatest((v_plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8, 1);
    END IF;
    v_common := coalesce(v_common, '{}');
    v_common_share := coalesce(v_common_share, '{}');
    v_distinct := greatest(v_distinct, (SELECT c.reltuples FROM pg_catalog.pg_class c
                                         WHERE c.oid = 'history.conversations'::pg_catalog.regclass));
    RETURN greatest(
        p_total * (
            -- the listed common conversations' shares
            coalesce((SELECT pg_catalog.sum(c.share) FROM ROWS FROM (pg_catalog.unnest(v_common), pg_catalog.unnest(v_common_share)) c(conversation_key, share)
                       WHERE c.conversation_key = ANY (p_conversations)), 0)
            -- each other listed conversation: an equal share of the rest
            + (SELECT pg_catalog.count(*) FROM (SELECT DISTINCT x FROM pg_catalog.unnest(p_conversations) x) l
                WHERE NOT l.x = ANY (v_common))
              * greatest(1 - v_null_share - coalesce((SELECT pg_catalog.sum(s) FROM pg_catalog.unnest(v_common_share) s), 0), 0)
              / greatest(v_distinct - pg_catalog.cardinality(v_common), 1)),
        1);
END
$function$;

COMMENT ON FUNCTION history._listed_rows(bigint[], float8, regclass) IS
    'Internal: an estimate of the projection rows a list of conversations holds (the planner''s, with the conversations'' count as a floor under its distinct count)';
REVOKE ALL ON FUNCTION history._listed_rows(bigint[], float8, regclass) FROM PUBLIC;
