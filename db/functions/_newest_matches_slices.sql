-- _newest_matches_slices: the slice strategy of history._newest_matches
-- (its header says when it is chosen and what it reads). The text index
-- holds each row's hour and day (history._time_buckets), so the matches in
-- some hours are one scan that fetches only them: read slices of hours newest
-- first, each sized from the matches found so far, until p_count are found.
-- The arguments are _newest_matches' (p_strategy 'slice' or a forced
-- 'slice:...'), with its estimates: p_matches, p_total, p_set_rows (NULL
-- when forced or not computed) and the table's newest and oldest sent_at
-- (NULL: read here); p_tenant, the tenant whose rows are read (named in
-- every statement but the table's bounds, which cover every tenant).
DROP FUNCTION IF EXISTS history._newest_matches_slices(tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text, float8, float8, float8, timestamptz, timestamptz, bigint[], bigint[], tstzmultirange[], bigint[]);
CREATE OR REPLACE FUNCTION history._newest_matches_slices(
    p_tenant integer, p_query tsquery, p_agent bigint, p_conversations bigint[], p_windows tstzmultirange[],
    p_member_windows boolean, p_authors bigint[], p_after timestamptz, p_before timestamptz, p_count integer,
    p_strategy text, p_matches float8, p_total float8, p_set_rows float8, p_newest timestamptz, p_oldest timestamptz,
    p_audience bigint[], p_audience_conversations bigint[], p_audience_windows tstzmultirange[], p_exclude bigint[])
RETURNS SETOF history.message_search_documents
LANGUAGE plpgsql
VOLATILE  -- it switches planner settings
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_strategy   text := p_strategy;
    v_matches    float8 := p_matches;
    v_set_rows   float8 := p_set_rows;
    v_total      float8 := p_total;
    v_newest     timestamptz := p_newest;
    v_oldest     timestamptz := p_oldest;
    v_costs      float8[];  -- a long list's slice reads: and, filter, listed (estimates)
    v_first_hour bigint;    -- the oldest hour that can hold a match (hours since 2000-01-01, UTC)
    v_hour       bigint;    -- the newest hour not read yet
    v_width      bigint;    -- hours in the next slice
    v_hours_read bigint;
    v_hours      bigint;    -- hours from the oldest row's to the newest's
    v_low_day    bigint;    -- the slice's whole days (days since 2000-01-01)
    v_high_day   bigint;
    v_keys       bigint[];  -- the slice's time-bucket keys (history._time_buckets)
    v_share      float8;    -- the share of all rows in the listed conversations
    v_found      history.message_search_documents[] := '{}';
    v_slice      history.message_search_documents[];
    v_indexscan  text := pg_catalog.current_setting('enable_indexscan');
    v_short_list boolean := coalesce(pg_catalog.cardinality(p_conversations) <= 250, false);
    -- the filters of the plans (history._match_filters)
    v_list_test  text := (SELECT f.list_test FROM history._match_filters(p_conversations, p_windows, p_member_windows,
                                                                         p_exclude, p_audience) f);
    v_other_filters text := (SELECT f.other_filters FROM history._match_filters(p_conversations, p_windows, p_member_windows,
                                                                                p_exclude, p_audience) f);
    v_filters    text := 'd.document @@ $1' || v_list_test || v_other_filters;
    v_slice_read text;     -- a long list's slice: 'and', 'filter' or 'listed' (see the loop)
    v_slice_where text;    -- one slice's conditions
    v_slice_matches float8;  -- estimates for one slice: all conversations' matches in its hours,
    v_slice_listed  float8;  -- and the list's rows in them
    v_low_week   bigint;    -- a weeks slice's weeks (weeks since 2000-01-01, hour 168 * week starts one)
    v_high_week  bigint;
BEGIN
    -- The hours that can hold a match, newest first: from the newest
    -- row's (or p_before's) to the oldest row's (or p_after's).
    IF v_newest IS NULL AND pg_catalog.current_setting('citus.version', true) IS NULL THEN
        SELECT pg_catalog.max(d.sent_at), pg_catalog.min(d.sent_at) INTO v_newest, v_oldest
          FROM history.message_search_documents d;  -- two index probes
    ELSIF v_newest IS NULL THEN  -- on Citus the tenant's shard alone (as _newest_matches reads them)
        SELECT pg_catalog.max(d.sent_at), pg_catalog.min(d.sent_at) INTO v_newest, v_oldest
          FROM history.message_search_documents d WHERE d.tenant_key = p_tenant;
    END IF;
    IF v_newest IS NULL THEN
        RETURN;
    END IF;
    v_hour := (history._time_buckets(least(v_newest, p_before)))[1] / 2;
    v_first_hour := (history._time_buckets(greatest(v_oldest, p_after)))[1] / 2;
    v_hours := (history._time_buckets(v_newest))[1] / 2 - (history._time_buckets(v_oldest))[1] / 2 + 1;
    -- The first slice: the hours that hold p_count matches if they are
    -- spread evenly over the table's hours and rows (a list's share of
    -- them); each next one from the matches found so far, at most twice
    -- the hours read, so a sparse newest stretch cannot make it overshoot.
    IF v_matches IS NULL THEN  -- forced: no estimates
        v_width := 1;
    ELSE
        v_share := least(coalesce(v_set_rows / v_total, 1), 1);  -- all of an agent's, or a list too long to estimate: 1
        v_width := least(pg_catalog.ceil(1.25 * p_count / greatest(v_matches * v_share, 1) * v_hours), 1e9);
        -- A long list's slice fetches every conversation's matches in its
        -- hours (M / hours each): when that is many rows, start with
        -- about 20 000 of them. Matches are rarely spread evenly (the
        -- 2 000-conversation set at 10M holds 2-3x its average in the
        -- newest hours), and a first slice too wide costs every row
        -- fetched; one too narrow costs only one more scan.
        IF NOT v_short_list THEN
            v_width := least(v_width, pg_catalog.ceil(20000 * v_hours / greatest(v_matches, 1)));
        END IF;
    END IF;
    PERFORM pg_catalog.set_config('enable_indexscan', 'off', true);
    v_hours_read := 0;
    WHILE v_hour >= v_first_hour AND pg_catalog.cardinality(v_found) < p_count LOOP
        v_width := least(greatest(v_width, 1), v_hour - v_first_hour + 1);
        IF v_width > 24 * 1000
           OR (pg_catalog.cardinality(v_found) > 0 AND pg_catalog.cardinality(v_found)::float8 * (v_hour - v_first_hour + 1) / v_hours_read
                                    < 2 * (p_count - pg_catalog.cardinality(v_found))) THEN
            -- Years left to read, or (at the yield so far) the rest holds
            -- fewer than twice the matches still wanted: read the rest at
            -- once, through the text index alone.
            -- ROW(d.*) and its type, not d: executed on a Citus worker's shard, d is the shard's row type.
            EXECUTE 'SELECT ARRAY(
                SELECT ROW(d.*)::history.message_search_documents FROM history.message_search_documents d
                 WHERE ' || v_filters || '
                   AND d.sent_at < $9
                 ORDER BY d.sent_at DESC, d.message_id DESC
                 LIMIT $8)'
               INTO v_slice
              USING p_query, p_agent, p_conversations, p_windows, p_authors, p_after, p_before,
                    p_count - pg_catalog.cardinality(v_found),
                    pg_catalog.timezone('UTC', '2000-01-01'::timestamp + (v_hour + 1) * interval '1 hour'),
                    NULL::timestamptz, NULL::timestamptz, p_exclude, p_audience, p_audience_conversations, p_audience_windows, p_tenant;
            v_found := v_found || v_slice;
            EXIT;
        END IF;
        -- How the slice is read. A short list's names the hours (and
        -- days) with the list inside the index ('index'), or its
        -- conversations' whole weeks ('weeks'), whichever reads fewer
        -- postings and rows by the estimates: the hours' keys yield every
        -- conversation's postings in them, the weeks' only the list's, but
        -- over whole weeks (at 10M, a list holding a million-row channel
        -- took 14 ms where the hours took 38). A long list's is read the
        -- cheapest way by the estimates (microseconds at 10M: a text-index
        -- entry 0.28, a descent of the list's (conversation, sent_at)
        -- index per conversation 2.5 and an entry of it 0.07, a row
        -- fetched and tested 1.3):
        --  * and: the text index's slice ANDed with the list's rows in
        --    the slice's hours;
        --  * filter: the text index's slice, the list tested on each row
        --    ("+ 0" keeps its index out), when the list is the bigger read;
        --  * listed: the list's rows in the slice's hours, each tested for
        --    the text ("IS TRUE": the same test, one the text index cannot
        --    answer), when the query matches more rows there than the list
        --    holds (at 10M, 2 017 conversations and five frequent words:
        --    11 ms where "and" took 18).
        -- The planner weighs these with its own S, which can be many times
        -- too big or too small, so the choice is made here.
        v_low_week := (v_hour - v_width + 1 + 168 * 1000000) / 168 - 1000000;  -- rounded down
        v_high_week := (v_hour + 168 * 1000000) / 168 - 1000000;
        IF p_conversations IS NULL THEN
            v_slice_read := 'index';  -- membership tests
        ELSIF v_strategy = 'slice:weeks' THEN
            v_slice_read := 'weeks';
        ELSIF v_short_list THEN
            v_slice_read := CASE
                WHEN v_matches IS NULL OR v_set_rows IS NULL THEN 'index'
                WHEN v_set_rows * (v_hour - 168 * v_low_week + 1) / v_hours / 50
                     + v_matches * v_set_rows / v_total * (v_hour - 168 * v_low_week + 1) / v_hours
                     + 20 * pg_catalog.cardinality(p_conversations) * (v_high_week - v_low_week + 1)
                   < (v_total + v_set_rows) * v_width / v_hours / 50
                     + v_matches * v_set_rows / v_total * v_width / v_hours THEN 'weeks'
                ELSE 'index' END;
        ELSIF v_strategy LIKE 'slice:%' THEN
            v_slice_read := pg_catalog.substr(v_strategy, 7);
        ELSIF v_matches IS NULL OR v_set_rows IS NULL THEN
            v_slice_read := 'and';
        ELSE
            v_slice_matches := v_matches * v_width / v_hours;
            v_slice_listed := v_set_rows * v_width / v_hours;
            v_costs := ARRAY[0.28 * v_slice_matches + 2.5 * pg_catalog.cardinality(p_conversations)
                             + 0.07 * v_slice_listed + 1.3 * v_slice_matches * v_set_rows / v_total,
                             (0.28 + 1.3) * v_slice_matches,
                             2.5 * pg_catalog.cardinality(p_conversations) + 1.3 * v_slice_listed];
            v_slice_read := CASE WHEN v_costs[3] < least(v_costs[1], v_costs[2]) THEN 'listed'
                                 WHEN v_costs[2] < v_costs[1] THEN 'filter' ELSE 'and' END;
        END IF;
        IF v_slice_read = 'weeks' THEN
            v_width := v_hour - 168 * v_low_week + 1;
        END IF;
        -- The keys of hours v_hour - v_width + 1 .. v_hour: the listed
        -- conversations' weeks, or its whole days by their day keys and
        -- the hours before and after them by theirs.
        v_low_day := pg_catalog.ceil((v_hour - v_width + 1) / 24.0);
        v_high_day := pg_catalog.floor((v_hour + 1) / 24.0) - 1;
        v_keys := CASE WHEN v_slice_read = 'weeks'
            THEN ARRAY(SELECT (history._conversation_weeks(c.conversation_key,
                                   pg_catalog.timezone('UTC', '2000-01-01'::timestamp + w * interval '7 days')))[1]
                         FROM (SELECT DISTINCT x AS conversation_key FROM pg_catalog.unnest(p_conversations) x) c,
                              pg_catalog.generate_series(v_low_week, v_high_week) w)
            WHEN v_low_day <= v_high_day
            THEN ARRAY(SELECT 2 * h FROM pg_catalog.generate_series(v_hour - v_width + 1, 24 * v_low_day - 1) h)
                 || ARRAY(SELECT 2 * d + 1 FROM pg_catalog.generate_series(v_low_day, v_high_day) d)
                 || ARRAY(SELECT 2 * h FROM pg_catalog.generate_series(24 * (v_high_day + 1), v_hour) h)
            ELSE ARRAY(SELECT 2 * h FROM pg_catalog.generate_series(v_hour - v_width + 1, v_hour) h) END;
        -- Three independent parts: the text tested through the index with
        -- the slice's hours as its keys (v_keys) or on each row; the list
        -- tested through its index, or on each row; and, when the list's
        -- index is read, the same hours as a range of sent_at ($10, $11).
        -- A weeks slice's keys are the list's, and its newest week may
        -- reach past v_hour (read already, or after p_before).
        v_slice_where := CASE WHEN v_slice_read = 'listed' THEN '(d.document @@ $1) IS TRUE'
                              WHEN v_slice_read = 'weeks' THEN 'history._conversation_weeks(d.conversation_key, d.sent_at) OPERATOR(pg_catalog.&&) $9
           AND d.document @@ $1
           AND d.sent_at < $11'
                              ELSE 'history._time_buckets(d.sent_at) OPERATOR(pg_catalog.&&) $9
           AND d.document @@ $1' END
            || CASE WHEN v_slice_read = 'filter' THEN '
           AND (d.conversation_key OPERATOR(pg_catalog.+) 0) = ANY ($3)'
                    WHEN v_slice_read = 'weeks' THEN '' ELSE v_list_test END
            || CASE WHEN v_slice_read IN ('listed', 'and') THEN '
           AND d.sent_at >= $10 AND d.sent_at < $11' ELSE '' END
            || v_other_filters;
        -- ROW(d.*) and its type, not d: executed on a Citus worker's shard, d is the shard's row type.
        EXECUTE 'SELECT ARRAY(
            SELECT ROW(d.*)::history.message_search_documents FROM history.message_search_documents d
             WHERE ' || v_slice_where || '
             ORDER BY d.sent_at DESC, d.message_id DESC
             LIMIT $8)'
           INTO v_slice
          USING p_query, p_agent, p_conversations, p_windows, p_authors, p_after, p_before,
                p_count - pg_catalog.cardinality(v_found), v_keys,
                pg_catalog.timezone('UTC', '2000-01-01'::timestamp + (v_hour - v_width + 1) * interval '1 hour'),
                pg_catalog.timezone('UTC', '2000-01-01'::timestamp + (v_hour + 1) * interval '1 hour'),
                p_exclude, p_audience, p_audience_conversations, p_audience_windows, p_tenant;
        v_found := v_found || v_slice;
        v_hours_read := v_hours_read + v_width;
        v_hour := v_hour - v_width;
        v_width := CASE WHEN pg_catalog.cardinality(v_found) = 0 THEN 2 * v_hours_read
                        ELSE least(pg_catalog.ceil(1.25 * (p_count - pg_catalog.cardinality(v_found))
                                                   * v_hours_read / pg_catalog.cardinality(v_found)),
                                   2 * v_hours_read) END;
    END LOOP;
    PERFORM pg_catalog.set_config('enable_indexscan', v_indexscan, true);
    RETURN QUERY SELECT (x).* FROM pg_catalog.unnest(v_found) x;
    RETURN;
END
$function$;

COMMENT ON FUNCTION history._newest_matches_slices(integer, tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text, float8, float8, float8, timestamptz, timestamptz, bigint[], bigint[], tstzmultirange[], bigint[]) IS
    'Internal: the slice strategy of _newest_matches: slices of hours (or a list''s weeks) newest first until the count is found';
REVOKE ALL ON FUNCTION history._newest_matches_slices(integer, tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text, float8, float8, float8, timestamptz, timestamptz, bigint[], bigint[], tstzmultirange[], bigint[]) FROM PUBLIC;
