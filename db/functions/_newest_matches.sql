-- _newest_matches: the newest p_count projection rows (by sent_at, then
-- message id, descending) matching p_query, in p_conversations (or, when
-- null, in every conversation p_agent is a member of), written by one of
-- p_authors (null: anyone), sent in [p_after, p_before) (nulls: unbounded).
--
-- No single plan is bounded for every query, so the strategy is chosen from
-- the planner's estimate of how many messages match at all:
--  * few (at most p_few_rows): through the text index, then sort (reading
--    that many rows costs less than any ordered walk);
--  * many, in at most p_walk_conversations listed conversations: the newest
--    matches of each conversation by its (conversation, sent_at) index,
--    merged (bitmap scans off: they would read a whole conversation to sort it);
--  * many, in more conversations (or all of an agent's, p_conversations
--    null): matches are then usually dense among the newest messages, so look
--    at the newest p_probe_factor * p_count rows of the whole projection; if
--    they hold p_count matches those are the newest p_count (the scan is in
--    order); else fall back to the text index.
-- Ordered index scans are switched off for the fallback: a LIMIT over an
-- ordered scan filtered by text and conversation is what the planner picks
-- when it misjudges their correlation, and then it reads most of the table.
-- The last three parameters are the thresholds (defaults measured at 1M
-- messages, docs/benchmarks.md); tests pass small ones to force each strategy.
-- Called by search_history under plan_cache_mode = force_custom_plan.
CREATE OR REPLACE FUNCTION history._newest_matches(
    p_query tsquery, p_agent bigint, p_conversations bigint[], p_authors bigint[],
    p_after timestamptz, p_before timestamptz, p_count integer,
    p_few_rows integer DEFAULT 20000, p_walk_conversations integer DEFAULT 100, p_probe_factor integer DEFAULT 50)
RETURNS SETOF history.message_search_documents
LANGUAGE plpgsql
VOLATILE  -- it asks EXPLAIN for an estimate and switches a planner setting
AS $function$
DECLARE
    v_plan         json;
    v_probe        history.message_search_documents[];
    v_indexscan    text := pg_catalog.current_setting('enable_indexscan');
    v_bitmapscan   text := pg_catalog.current_setting('enable_bitmapscan');
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) SELECT 1 FROM history.message_search_documents d WHERE d.document @@ $1'
       INTO v_plan USING p_query;

    IF (v_plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8 > p_few_rows THEN
        IF pg_catalog.cardinality(p_conversations) <= p_walk_conversations THEN
            -- walk each conversation's (conversation, sent_at) index newest first
            PERFORM pg_catalog.set_config('enable_bitmapscan', 'off', true);
            RETURN QUERY
                SELECT d.* FROM pg_catalog.unnest(p_conversations) c(conversation_key)
                 CROSS JOIN LATERAL (
                     SELECT * FROM history.message_search_documents d
                      WHERE d.conversation_key = c.conversation_key AND d.document @@ p_query
                        AND (p_authors IS NULL OR d.author_key = ANY (p_authors))
                        AND (p_after IS NULL OR d.sent_at >= p_after) AND (p_before IS NULL OR d.sent_at < p_before)
                      ORDER BY d.sent_at DESC, d.message_id DESC
                      LIMIT p_count) d
                 ORDER BY d.sent_at DESC, d.message_id DESC
                 LIMIT p_count;
            PERFORM pg_catalog.set_config('enable_bitmapscan', v_bitmapscan, true);
            RETURN;
        END IF;
        -- the newest rows of the whole projection, in order, up to a bound
        v_probe := ARRAY(
            SELECT d FROM (SELECT * FROM history.message_search_documents d
                            ORDER BY d.sent_at DESC, d.message_id DESC
                            LIMIT p_count * p_probe_factor) d
             WHERE CASE WHEN p_conversations IS NOT NULL THEN d.conversation_key = ANY (p_conversations)
                        ELSE EXISTS (SELECT 1 FROM history.memberships m
                                      WHERE m.account_key = p_agent AND m.conversation_key = d.conversation_key) END
               AND d.document @@ p_query
               AND (p_authors IS NULL OR d.author_key = ANY (p_authors))
               AND (p_after IS NULL OR d.sent_at >= p_after) AND (p_before IS NULL OR d.sent_at < p_before)
             ORDER BY d.sent_at DESC, d.message_id DESC
             LIMIT p_count);
        IF pg_catalog.cardinality(v_probe) = p_count THEN
            RETURN QUERY SELECT (x).* FROM pg_catalog.unnest(v_probe) x;
            RETURN;
        END IF;
        -- Many matches, sparse among the newest rows: an ordered scan is the wrong plan.
        PERFORM pg_catalog.set_config('enable_indexscan', 'off', true);
    END IF;

    RETURN QUERY
        SELECT d.* FROM history.message_search_documents d
         WHERE d.document @@ p_query
           AND CASE WHEN p_conversations IS NOT NULL THEN d.conversation_key = ANY (p_conversations)
                    ELSE EXISTS (SELECT 1 FROM history.memberships m
                                  WHERE m.account_key = p_agent AND m.conversation_key = d.conversation_key) END
           AND (p_authors IS NULL OR d.author_key = ANY (p_authors))
           AND (p_after IS NULL OR d.sent_at >= p_after) AND (p_before IS NULL OR d.sent_at < p_before)
         ORDER BY d.sent_at DESC, d.message_id DESC
         LIMIT p_count;
    PERFORM pg_catalog.set_config('enable_indexscan', v_indexscan, true);
END
$function$;

COMMENT ON FUNCTION history._newest_matches(tsquery, bigint, bigint[], bigint[], timestamptz, timestamptz, integer, integer, integer, integer) IS
    'Internal: the newest matches of a query in an agent''s (or the given) conversations, with bounded work';
REVOKE ALL ON FUNCTION history._newest_matches(tsquery, bigint, bigint[], bigint[], timestamptz, timestamptz, integer, integer, integer, integer) FROM PUBLIC;
