-- _newest_matches: the newest p_count projection rows (by sent_at, then
-- message id, descending) matching p_query, in p_conversations (or, when
-- null, in every conversation p_agent is a member of), written by one of
-- p_authors (null: anyone), sent in [p_after, p_before) (nulls: unbounded),
-- and inside the visible windows:
--  * p_windows (parallel to p_conversations, one multirange per distinct
--    conversation): only rows inside their conversation's window;
--  * p_member_windows: only rows inside p_agent's membership intervals;
--  * neither: at any time (the counting pass, which counts the rest).
-- The windows are applied before the count, in every strategy, so p_count
-- counts only visible rows: newer rows outside the windows (after the agent
-- left a busy conversation) never push an older visible one out (SPEC §9:
-- caps bound work, never eligibility).
--
-- No single plan is bounded for every query, so the strategy is chosen from
-- the planner's estimates of how many messages match (M) and, for a list of
-- conversations, how many messages the list holds (S):
--  * text, when M <= 20 * p_count, or for a list when it reads less than a
--    walk: the text index (with the list's index, ANDed), then sort; when M
--    is large, with ordered index scans off: a LIMIT over an ordered scan
--    filtered by text and conversation is what the planner picks when it
--    misjudges their correlation, and then it reads most of the table;
--  * walk, for a list of at most 1000 conversations: each visible window of
--    each conversation, through its (conversation, sent_at) index newest
--    first from the window's end, stopping at p_count matches or the
--    window's start, merged; it reads about p_count / (M / all rows) rows,
--    at most S, and never a row outside a window (bitmap scans off: they
--    would read a whole conversation to sort it);
--  * probe, for more conversations (or all of an agent's, p_conversations
--    null) when M > 20 * p_count: matches are then dense among the newest
--    messages, so read the newest rows of the whole projection in order, at
--    most min(50 * p_count, 50 000) — for all of an agent's conversations up
--    to 4 * p_count / density, at most M and 500 000 — and if they hold
--    p_count visible matches those are the newest p_count (the scan is in
--    order); else text.
-- p_strategy forces one ('walk', 'probe', 'text') for the tests.
-- Called by search_history under plan_cache_mode = force_custom_plan.
CREATE OR REPLACE FUNCTION history._newest_matches(
    p_query tsquery, p_agent bigint, p_conversations bigint[], p_windows tstzmultirange[],
    p_member_windows boolean, p_authors bigint[],
    p_after timestamptz, p_before timestamptz, p_count integer, p_strategy text DEFAULT NULL)
RETURNS SETOF history.message_search_documents
LANGUAGE plpgsql
VOLATILE  -- it asks EXPLAIN for estimates and switches planner settings
AS $function$
DECLARE
    v_strategy   text := p_strategy;
    v_plan       json;
    v_matches    float8;
    v_set_rows   float8;
    v_total      float8;
    v_probe      history.message_search_documents[];
    v_probe_rows bigint := least(50 * p_count, 50000);
    v_segment_conversations bigint[];
    v_segment_windows       tstzrange[];
    v_indexscan  text := pg_catalog.current_setting('enable_indexscan');
    v_bitmapscan text := pg_catalog.current_setting('enable_bitmapscan');
    -- The probe's and the text plan's filters, as SQL over $1 .. $8 (query,
    -- agent, conversations, windows, authors, after, before, count). One
    -- text per case, not a CASE: a membership test under a CASE or an OR
    -- stays a subplan that hashes all the agent's memberships (250 000 rows,
    -- 300 ms, for the everything-agent at 10M) instead of becoming a semi-join.
    v_in_membership text := '
               AND EXISTS (SELECT 1 FROM history.memberships m
                            WHERE m.account_key = $2 AND m.conversation_key = d.conversation_key'
        || CASE WHEN p_member_windows THEN '
                              AND m.since <= d.sent_at AND (m.until IS NULL OR d.sent_at < m.until)' ELSE '' END
        || ')';
    v_filters text := 'd.document @@ $1'
        || CASE WHEN p_conversations IS NULL OR p_member_windows
                THEN v_in_membership ELSE '' END
        || CASE WHEN p_conversations IS NOT NULL THEN '
               AND d.conversation_key = ANY ($3)' ELSE '' END
        -- a semi-join: the windows are hashed once, not searched per row
        || CASE WHEN p_windows IS NOT NULL THEN '
               AND EXISTS (SELECT 1 FROM ROWS FROM (pg_catalog.unnest($3), pg_catalog.unnest($4)) w(conversation_key, visible)
                            WHERE w.conversation_key = d.conversation_key AND d.sent_at <@ w.visible)' ELSE '' END
        || '
               AND ($5 IS NULL OR d.author_key = ANY ($5))
               AND ($6 IS NULL OR d.sent_at >= $6) AND ($7 IS NULL OR d.sent_at < $7)';
BEGIN
    IF p_windows IS NOT NULL
       AND (p_conversations IS NULL OR pg_catalog.cardinality(p_windows) <> pg_catalog.cardinality(p_conversations)) THEN
        RAISE EXCEPTION 'p_windows needs one window per conversation: % windows, % conversations',
            pg_catalog.cardinality(p_windows), coalesce(pg_catalog.cardinality(p_conversations)::text, 'NULL')
            USING ERRCODE = 'HS001';
    END IF;

    IF v_strategy IS NULL THEN
        EXECUTE 'EXPLAIN (FORMAT JSON) SELECT 1 FROM history.message_search_documents d WHERE d.document @@ $1'
           INTO v_plan USING p_query;
        v_matches := (v_plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
        SELECT c.reltuples INTO v_total FROM pg_catalog.pg_class c
         WHERE c.oid = 'history.message_search_documents'::pg_catalog.regclass;
        IF v_matches <= 20 * p_count THEN
            v_strategy := 'text';
        ELSIF pg_catalog.cardinality(p_conversations) <= 1000 THEN
            EXECUTE 'EXPLAIN (FORMAT JSON) SELECT 1 FROM history.message_search_documents d WHERE d.conversation_key = ANY ($1)'
               INTO v_plan USING p_conversations;
            v_set_rows := (v_plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
            -- rows a walk reads: about p_count / density of matches, at most
            -- the conversations' rows; the text index reads M index entries
            -- and the conversations' S, and fetches their intersection
            v_strategy := CASE WHEN least(v_set_rows, p_count * greatest(v_total, 1) / v_matches)
                                    + 10 * pg_catalog.cardinality(p_conversations) < v_matches + v_set_rows
                               THEN 'walk' ELSE 'text' END;
        ELSE
            v_strategy := 'probe';
        END IF;
    END IF;

    IF v_strategy = 'walk' AND p_conversations IS NOT NULL THEN
        -- The segments to walk: each listed conversation's visible windows as
        -- disjoint ranges (the whole timeline when none apply).
        IF p_windows IS NOT NULL THEN
            SELECT coalesce(pg_catalog.array_agg(c.conversation_key), '{}'), coalesce(pg_catalog.array_agg(r), '{}')
              INTO v_segment_conversations, v_segment_windows
              FROM ROWS FROM (pg_catalog.unnest(p_conversations), pg_catalog.unnest(p_windows)) c(conversation_key, visible)
             CROSS JOIN LATERAL pg_catalog.unnest(c.visible) r;
        ELSIF p_member_windows THEN
            SELECT coalesce(pg_catalog.array_agg(w.conversation_key), '{}'), coalesce(pg_catalog.array_agg(r), '{}')
              INTO v_segment_conversations, v_segment_windows
              FROM history._member_windows(p_agent, p_conversations) w
             CROSS JOIN LATERAL pg_catalog.unnest(w.visible) r;
        ELSE
            SELECT coalesce(pg_catalog.array_agg(c.conversation_key), '{}'),
                   coalesce(pg_catalog.array_agg('(,)'::tstzrange), '{}')
              INTO v_segment_conversations, v_segment_windows
              FROM (SELECT DISTINCT x AS conversation_key FROM pg_catalog.unnest(p_conversations) x) c;
        END IF;
        PERFORM pg_catalog.set_config('enable_bitmapscan', 'off', true);
        RETURN QUERY
            SELECT d.* FROM ROWS FROM (pg_catalog.unnest(v_segment_conversations), pg_catalog.unnest(v_segment_windows)) s(conversation_key, visible)
             CROSS JOIN LATERAL (
                 SELECT * FROM history.message_search_documents d
                  WHERE d.conversation_key = s.conversation_key
                    -- the window's bounds as index bounds (infinite when open)
                    AND d.sent_at >= coalesce(pg_catalog.lower(s.visible), '-infinity')
                    AND d.sent_at <= coalesce(pg_catalog.upper(s.visible), 'infinity')
                    AND d.sent_at <@ s.visible
                    AND d.document @@ p_query
                    AND (p_authors IS NULL OR d.author_key = ANY (p_authors))
                    AND (p_after IS NULL OR d.sent_at >= p_after) AND (p_before IS NULL OR d.sent_at < p_before)
                  ORDER BY d.sent_at DESC, d.message_id DESC
                  LIMIT p_count) d
             ORDER BY d.sent_at DESC, d.message_id DESC
             LIMIT p_count;
        PERFORM pg_catalog.set_config('enable_bitmapscan', v_bitmapscan, true);
        RETURN;
    END IF;

    IF v_strategy IN ('probe', 'walk') THEN  -- a walk needs a list: probe all of the agent's conversations
        -- All of an agent's conversations hold most matches: p_count of them
        -- lie within about p_count / density newest rows (read twice that),
        -- and reading up to M rows in order costs no more than the text plan.
        IF p_conversations IS NULL AND v_matches > 0 THEN
            v_probe_rows := least(greatest(v_probe_rows, least(4 * p_count * v_total / v_matches, v_matches)), 500000);
        END IF;
        EXECUTE 'SELECT ARRAY(
            SELECT d FROM (SELECT * FROM history.message_search_documents d
                            ORDER BY d.sent_at DESC, d.message_id DESC
                            LIMIT $9) d
             WHERE ' || v_filters || '
             ORDER BY d.sent_at DESC, d.message_id DESC
             LIMIT $8)'
           INTO v_probe
          USING p_query, p_agent, p_conversations, p_windows, p_authors, p_after, p_before, p_count, v_probe_rows;
        IF pg_catalog.cardinality(v_probe) = p_count THEN
            RETURN QUERY SELECT (x).* FROM pg_catalog.unnest(v_probe) x;
            RETURN;
        END IF;
        v_strategy := 'probe';
    END IF;

    -- Many matches (a failed probe, or a list the text index reads faster): an
    -- ordered scan would be the planner's misjudged plan. With few, leave it be.
    IF v_strategy = 'probe' OR v_matches > 20 * p_count THEN
        PERFORM pg_catalog.set_config('enable_indexscan', 'off', true);
    END IF;
    RETURN QUERY EXECUTE '
        SELECT d.* FROM history.message_search_documents d
         WHERE ' || v_filters || '
         ORDER BY d.sent_at DESC, d.message_id DESC
         LIMIT $8'
      USING p_query, p_agent, p_conversations, p_windows, p_authors, p_after, p_before, p_count;
    PERFORM pg_catalog.set_config('enable_indexscan', v_indexscan, true);
END
$function$;

COMMENT ON FUNCTION history._newest_matches(tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text) IS
    'Internal: the newest matches of a query inside the visible windows of an agent''s (or the given) conversations, with bounded work';
REVOKE ALL ON FUNCTION history._newest_matches(tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text) FROM PUBLIC;
