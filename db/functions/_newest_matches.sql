-- _newest_matches: the newest p_count projection rows (by sent_at, then
-- message id, descending) matching p_query, in p_conversations (or, when
-- null, in every conversation p_agent is a member of), written by one of
-- p_authors (null: anyone), sent in [p_after, p_before) (nulls: unbounded),
-- and inside the visible windows:
--  * p_windows (parallel to p_conversations, one multirange per distinct
--    conversation): only rows inside their conversation's window;
--  * p_member_windows: only rows inside p_agent's membership intervals;
--  * neither: at any time (the counting pass, which counts the rest).
-- and passing the other rules of who may see what, when given: not in
-- p_exclude (the run's context), and, for a non-empty p_audience, a lineage
-- the audience may read (history._lineage_blocked, with the audience's
-- windows p_audience_conversations, p_audience_windows).
-- The windows and the other rules are applied before the count, in every
-- strategy, so p_count counts only visible rows: newer rows outside the
-- windows (after the agent left a busy conversation), or whose lineage the
-- audience may not read, never push an older eligible one out (caps bound
-- work, never eligibility).
--
-- No single plan is bounded for every query, so the strategy is chosen by
-- history._candidate_strategy from the planner's estimates of how many
-- messages match (M), how many rows the projection holds (T) and, for a list
-- of conversations, how many messages the list holds (S, history._listed_rows):
--  * text, when M <= 20 * p_count (the planner's estimate for any term
--    rarer than its most common ones is at most about that), or for a list
--    when it reads the least: the text index (a list of at most 250
--    conversations tested inside it, a longer one's index ANDed), then
--    sort; when M is large, with ordered index scans off: a LIMIT over an
--    ordered scan filtered by text and conversation is what the planner
--    picks when it misjudges their correlation, and then it reads most of
--    the table;
--  * walk, for a list of at most 1000 conversations holding few rows: each
--    visible window of each conversation, through its (conversation,
--    sent_at) index newest first from the window's end, stopping at p_count
--    matches or the window's start, merged; it reads about p_count * T / M
--    rows, at most S, and never a row outside a window (bitmap scans off:
--    they would read a whole conversation to sort it);
--  * slice, otherwise: the text index holds each row's hour and day
--    (history._time_buckets), so the matches in some hours are one scan that
--    fetches only them; read slices of hours newest first, each sized from
--    the matches found so far, until p_count are found. It fetches about
--    p_count rows for a list of at most 250 conversations (tested inside the
--    index), else p_count * T / S (all conversations' matches in the slices;
--    S = T for all of an agent's conversations; a long list whose S is
--    small is ANDed through its index instead), at least an hour's, and
--    reads about p_count * T * T / (M * S) compressed time postings,
--    whatever the table's size. A short list's slice may instead name its
--    conversations' weeks (history._conversation_weeks): whole weeks, but
--    only the list's postings in them, about p_count * T / M, which is less
--    when the list holds a small share of the rows (a big channel, say).
--    A long list's slice is the text index's
--    slice ANDed with the list's rows in those hours, or filtered by the
--    list, or (when the query matches so much that the list holds fewer
--    rows in those hours than it has matches) the list's rows in those
--    hours tested for the text, whichever its estimates make cheapest;
--  * probe, only when forced: the newest rows of the whole projection in
--    order, at most min(50 * p_count, 50 000), filtered; if they hold
--    p_count visible matches those are the newest p_count; else text.
-- p_strategy forces one ('walk', 'slice', 'probe', 'text') for the tests, and
-- 'slice:and', 'slice:filter', 'slice:listed' a long list's slice read,
-- 'slice:weeks' a short list's slices by weeks.
-- Called by search_history under plan_cache_mode = force_custom_plan.
-- p_tenant: the tenant whose rows are read, named in every statement on its
-- rows (on Citus, routed to its shard). The estimates are the table's, over
-- every tenant; on Citus, in a search delegated to the tenant's worker, its
-- shard's there (history._local_shard), and on the coordinator the empty
-- shell's (docs/scale-out.md).
DROP FUNCTION IF EXISTS history._newest_matches(tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text, bigint[], bigint[], tstzmultirange[], bigint[]);
CREATE OR REPLACE FUNCTION history._newest_matches(
    p_tenant integer, p_query tsquery, p_agent bigint, p_conversations bigint[], p_windows tstzmultirange[],
    p_member_windows boolean, p_authors bigint[],
    p_after timestamptz, p_before timestamptz, p_count integer, p_strategy text DEFAULT NULL,
    p_audience bigint[] DEFAULT NULL, p_audience_conversations bigint[] DEFAULT NULL,
    p_audience_windows tstzmultirange[] DEFAULT NULL, p_exclude bigint[] DEFAULT NULL)
RETURNS SETOF history.message_search_documents
LANGUAGE plpgsql
VOLATILE  -- it asks EXPLAIN for estimates and switches planner settings
AS $function$
DECLARE
    v_strategy   text := p_strategy;
    v_plan       json;
    v_estimated  regclass;  -- whose statistics the estimates come from
    -- Citus turns local execution off for the rest of the transaction at
    -- every EXPLAIN; a search delegated to its tenant's worker needs it back.
    v_local_execution text := pg_catalog.current_setting('citus.enable_local_execution', true);
    v_matches    float8;
    v_set_rows   float8;
    v_total      float8;
    v_probe      history.message_search_documents[];
    v_probe_rows bigint := least(50 * p_count, 50000);
    v_newest     timestamptz;
    v_oldest     timestamptz;
    v_hours      bigint;    -- hours from the oldest row's to the newest's
    v_segment_conversations bigint[];
    v_segment_windows       tstzrange[];
    v_indexscan  text := pg_catalog.current_setting('enable_indexscan');
    v_bitmapscan text := pg_catalog.current_setting('enable_bitmapscan');
    -- The probe's and the text plan's filters (history._match_filters).
    v_filters    text := (SELECT 'd.document @@ $1' || f.list_test || f.other_filters
                            FROM history._match_filters(p_conversations, p_windows, p_member_windows,
                                                        p_exclude, p_audience) f);
BEGIN
    IF p_strategy NOT IN ('text', 'walk', 'slice', 'slice:and', 'slice:filter', 'slice:listed', 'slice:weeks', 'probe') THEN
        RAISE EXCEPTION 'unknown strategy %', pg_catalog.quote_literal(p_strategy) USING ERRCODE = 'HS001';
    END IF;
    IF p_windows IS NOT NULL
       AND (p_conversations IS NULL OR pg_catalog.cardinality(p_windows) <> pg_catalog.cardinality(p_conversations)) THEN
        RAISE EXCEPTION 'p_windows needs one window per conversation: % windows, % conversations',
            pg_catalog.cardinality(p_windows), coalesce(pg_catalog.cardinality(p_conversations)::text, 'NULL')
            USING ERRCODE = 'HS001';
    END IF;

    IF v_strategy IS NULL THEN
        -- On a Citus worker an EXPLAIN of the distributed table would ask every
        -- shard (and a search delegated there may only read its tenant's).
        v_estimated := coalesce(history._local_shard('history.message_search_documents', p_tenant),
                                'history.message_search_documents');
        EXECUTE pg_catalog.format('EXPLAIN (FORMAT JSON) SELECT 1 FROM %s d WHERE d.document @@ $1', v_estimated)
           INTO v_plan USING p_query;
        v_matches := (v_plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
        IF v_estimated = 'history.message_search_documents'::pg_catalog.regclass THEN
            SELECT c.reltuples INTO v_total FROM pg_catalog.pg_class c WHERE c.oid = v_estimated;
        ELSE  -- (Citus hides its shards from pg_class queries)
            EXECUTE pg_catalog.format('EXPLAIN (FORMAT JSON) SELECT 1 FROM %s d', v_estimated) INTO v_plan;
            v_total := (v_plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
        END IF;
        v_total := greatest(v_total, 1);
        IF v_local_execution IS NOT NULL THEN
            PERFORM pg_catalog.set_config('citus.enable_local_execution', v_local_execution, true);
        END IF;
        v_strategy := history._candidate_strategy(p_count, v_matches, v_total, pg_catalog.cardinality(p_conversations));
        IF v_strategy IS NULL THEN  -- it needs the list's estimates: only now worth their reads
            v_set_rows := history._listed_rows(p_conversations, v_total, v_estimated);
            IF v_local_execution IS NOT NULL THEN
                PERFORM pg_catalog.set_config('citus.enable_local_execution', v_local_execution, true);
            END IF;
            IF pg_catalog.current_setting('citus.version', true) IS NULL THEN
                SELECT pg_catalog.max(d.sent_at), pg_catalog.min(d.sent_at) INTO v_newest, v_oldest
                  FROM history.message_search_documents d;  -- two index probes
            ELSE  -- on Citus the tenant's shard alone: without the tenant it is a read of every shard
                SELECT pg_catalog.max(d.sent_at), pg_catalog.min(d.sent_at) INTO v_newest, v_oldest
                  FROM history.message_search_documents d WHERE d.tenant_key = p_tenant;
            END IF;
            v_hours := coalesce((history._time_buckets(v_newest))[1] / 2 - (history._time_buckets(v_oldest))[1] / 2 + 1, 1);
            v_strategy := history._candidate_strategy(p_count, v_matches, v_total, pg_catalog.cardinality(p_conversations),
                                                      v_set_rows, v_hours);
        END IF;
    END IF;

    IF v_strategy LIKE 'slice%' THEN
        RETURN QUERY SELECT * FROM history._newest_matches_slices(
            p_tenant, p_query, p_agent, p_conversations, p_windows, p_member_windows, p_authors, p_after, p_before, p_count,
            v_strategy, v_matches, v_total, v_set_rows, v_newest, v_oldest,
            p_audience, p_audience_conversations, p_audience_windows, p_exclude);
        RETURN;
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
              FROM history._member_windows(p_tenant, p_agent, p_conversations) w
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
                  WHERE d.tenant_key = p_tenant AND d.conversation_key = s.conversation_key
                    -- the window's bounds as index bounds (infinite when open)
                    AND d.sent_at >= coalesce(pg_catalog.lower(s.visible), '-infinity')
                    AND d.sent_at <= coalesce(pg_catalog.upper(s.visible), 'infinity')
                    AND d.sent_at <@ s.visible
                    AND d.document @@ p_query
                    AND (p_authors IS NULL OR d.author_key = ANY (p_authors))
                    AND (p_after IS NULL OR d.sent_at >= p_after) AND (p_before IS NULL OR d.sent_at < p_before)
                    AND (p_exclude IS NULL OR d.message_key <> ALL (p_exclude))
                    -- history._lineage_blocked's test, inline (on Citus no function read of a distributed table here)
                    AND NOT (d.has_lineage AND coalesce(pg_catalog.cardinality(p_audience), 0) > 0 AND EXISTS (
                            SELECT 1 FROM history.message_lineage l
                             WHERE l.tenant_key = p_tenant AND l.message_key = d.message_key
                               AND history._outside_windows(l.ancestor_conversation_key, l.ancestor_sent_at,
                                                            p_audience_conversations, p_audience_windows)))
                  ORDER BY d.sent_at DESC, d.message_id DESC
                  LIMIT p_count) d
             ORDER BY d.sent_at DESC, d.message_id DESC
             LIMIT p_count;
        PERFORM pg_catalog.set_config('enable_bitmapscan', v_bitmapscan, true);
        RETURN;
    END IF;

    IF v_strategy IN ('probe', 'walk') THEN  -- forced (a walk needs a list: probe all of the agent's conversations)
        -- The tenant's newest rows; ROW(d.*) and its type, not d (on a Citus worker, a shard's row type).
        EXECUTE 'SELECT ARRAY(
            SELECT ROW(d.*)::history.message_search_documents
              FROM (SELECT * FROM history.message_search_documents d
                     WHERE d.tenant_key = $16
                     ORDER BY d.sent_at DESC, d.message_id DESC
                     LIMIT $9) d
             WHERE ' || v_filters || '
             ORDER BY d.sent_at DESC, d.message_id DESC
             LIMIT $8)'
           INTO v_probe
          USING p_query, p_agent, p_conversations, p_windows, p_authors, p_after, p_before, p_count, v_probe_rows,
                NULL::timestamptz, NULL::timestamptz, p_exclude, p_audience, p_audience_conversations, p_audience_windows, p_tenant;
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
      USING p_query, p_agent, p_conversations, p_windows, p_authors, p_after, p_before, p_count,
            NULL::bigint, NULL::timestamptz, NULL::timestamptz, p_exclude, p_audience, p_audience_conversations, p_audience_windows, p_tenant;
    PERFORM pg_catalog.set_config('enable_indexscan', v_indexscan, true);
END
$function$;

COMMENT ON FUNCTION history._newest_matches(integer, tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text,
    bigint[], bigint[], tstzmultirange[], bigint[]) IS
    'Internal: the newest matches of a query inside the visible windows of an agent''s (or the given) conversations, with bounded work';
REVOKE ALL ON FUNCTION history._newest_matches(integer, tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text,
    bigint[], bigint[], tstzmultirange[], bigint[]) FROM PUBLIC;
