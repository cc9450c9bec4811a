-- Revert history-search:_newest_matches from pg: back to its @v0.1.0 version
-- (the signature changed: the new function goes first).
BEGIN;
SET LOCAL ROLE history_owner;
DROP FUNCTION history._newest_matches(tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text, bigint[], bigint[], tstzmultirange[], bigint[]);
RESET ROLE;
COMMIT;
-- Deploy history-search:_newest_matches to pg
-- The functions live in db/functions/_listed_rows.sql and _newest_matches.sql.
BEGIN;
SET LOCAL ROLE history_owner;

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
CREATE OR REPLACE FUNCTION history._listed_rows(p_conversations bigint[], p_total float8)
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

COMMENT ON FUNCTION history._listed_rows(bigint[], float8) IS
    'Internal: an estimate of the projection rows a list of conversations holds (the planner''s, with the conversations'' count as a floor under its distinct count)';
REVOKE ALL ON FUNCTION history._listed_rows(bigint[], float8) FROM PUBLIC;
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
-- the planner's estimates of how many messages match (M), how many rows the
-- projection holds (T) and, for a list of conversations, how many messages
-- the list holds (S, history._listed_rows):
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
    v_costs      float8[];  -- rows read by text, walk, slice (estimates)
    v_newest     timestamptz;
    v_oldest     timestamptz;
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
    v_segment_conversations bigint[];
    v_segment_windows       tstzrange[];
    v_indexscan  text := pg_catalog.current_setting('enable_indexscan');
    v_bitmapscan text := pg_catalog.current_setting('enable_bitmapscan');
    -- A list of at most 250 conversations is tested inside the text index
    -- (its conversation column), so the text and slice plans fetch only the
    -- listed conversations' matches. For a longer list the index's work per
    -- listed conversation outweighs that (it merges their postings), and the
    -- list is a filter (or the conversations' index, ANDed). Not both:
    -- ANDing the conversations' index with a short list's text-index scan
    -- reads all their rows.
    v_short_list boolean := coalesce(pg_catalog.cardinality(p_conversations) <= 250, false);
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
    v_list_test text := CASE WHEN v_short_list THEN '
               AND ARRAY[d.conversation_key] OPERATOR(pg_catalog.&&) $3'
                WHEN p_conversations IS NOT NULL THEN '
               AND d.conversation_key = ANY ($3)' ELSE '' END;
    v_other_filters text := CASE WHEN p_conversations IS NULL OR p_member_windows
                                 THEN v_in_membership ELSE '' END
        -- a semi-join: the windows are hashed once, not searched per row
        || CASE WHEN p_windows IS NOT NULL THEN '
               AND EXISTS (SELECT 1 FROM ROWS FROM (pg_catalog.unnest($3), pg_catalog.unnest($4)) w(conversation_key, visible)
                            WHERE w.conversation_key = d.conversation_key AND d.sent_at <@ w.visible)' ELSE '' END
        || '
               AND ($5 IS NULL OR d.author_key = ANY ($5))
               AND ($6 IS NULL OR d.sent_at >= $6) AND ($7 IS NULL OR d.sent_at < $7)';
    v_filters text := 'd.document @@ $1' || v_list_test || v_other_filters;
    v_slice_read text;     -- a long list's slice: 'and', 'filter' or 'listed' (see the loop)
    v_slice_where text;    -- one slice's conditions
    v_slice_matches float8;  -- estimates for one slice: all conversations' matches in its hours,
    v_slice_listed  float8;  -- and the list's rows in them
    v_low_week   bigint;    -- a weeks slice's weeks (weeks since 2000-01-01, hour 168 * week starts one)
    v_high_week  bigint;
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
        EXECUTE 'EXPLAIN (FORMAT JSON) SELECT 1 FROM history.message_search_documents d WHERE d.document @@ $1'
           INTO v_plan USING p_query;
        v_matches := (v_plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
        SELECT c.reltuples INTO v_total FROM pg_catalog.pg_class c
         WHERE c.oid = 'history.message_search_documents'::pg_catalog.regclass;
        v_total := greatest(v_total, 1);
        IF v_matches <= 20 * p_count THEN
            v_strategy := 'text';
        ELSIF pg_catalog.cardinality(p_conversations) <= 5000 THEN
            v_set_rows := history._listed_rows(p_conversations, v_total);
            SELECT pg_catalog.max(d.sent_at), pg_catalog.min(d.sent_at) INTO v_newest, v_oldest
              FROM history.message_search_documents d;  -- two index probes
            v_hours := coalesce((history._time_buckets(v_newest))[1] / 2 - (history._time_buckets(v_oldest))[1] / 2 + 1, 1);
            -- Rows each reads or fetches (a compressed posting, a time key's
            -- too, costs ~1/50 of a fetched row: at 10M a slice of 105 days,
            -- two million time postings, took 46 ms in the index; a bitmap
            -- entry ~1/4): text,
            -- for a short list (tested inside the text index) the list's
            -- matches and the M + S postings it intersects (a list holding two
            -- big channels, S = 2 000 000, took 52 ms in the index at 10M for
            -- M = 40 000, where slices took 21), else the list's matches and
            -- the M + S bitmap entries ANDed (at 10M, 115 000 and 54 000 of
            -- them took 30 ms where slices took 110); a walk (at most 1000
            -- conversations), about p_count / density, at most S, plus a
            -- descent per conversation; slices, the list's matches in the
            -- hours that hold p_count (for a longer list all conversations'
            -- matches there), those hours' time postings (a short list's
            -- slices by weeks: the list's postings in those hours and a week
            -- more, that week's matches, and a key per conversation and week,
            -- each about as costly as 20 fetched rows: at 10M, one slice over
            -- a 20-conversation list's weeks took 25 ms, where the whole
            -- search without weeks took 8) and a few scans.
            v_costs := ARRAY[CASE WHEN v_short_list THEN v_matches * v_set_rows / v_total + (v_matches + v_set_rows) / 50
                                  ELSE v_matches * v_set_rows / v_total + (v_matches + v_set_rows) / 4 END,
                             CASE WHEN pg_catalog.cardinality(p_conversations) <= 1000
                                  THEN least(v_set_rows, p_count * v_total / v_matches)
                                       + 10 * pg_catalog.cardinality(p_conversations)
                                  ELSE 'Infinity' END,
                             CASE WHEN v_short_list THEN 1.25 * p_count ELSE p_count * v_total / v_set_rows END
                             + least(p_count * v_total * v_total / (v_matches * v_set_rows) / 50,
                                     CASE WHEN v_short_list
                                          THEN 1.25 * p_count * v_total / v_matches / 50
                                               + (v_set_rows / 50 + v_matches * v_set_rows / v_total) * 168 / v_hours
                                               + 20 * pg_catalog.cardinality(p_conversations)
                                                 * (1.25 * p_count * v_total / (v_matches * v_set_rows) * v_hours / 168 + 1)
                                          ELSE 'Infinity' END)
                             + 200];
            v_strategy := CASE WHEN v_costs[3] < least(v_costs[1], v_costs[2]) THEN 'slice'
                               WHEN v_costs[2] < v_costs[1] THEN 'walk' ELSE 'text' END;
        ELSE
            v_strategy := 'slice';
        END IF;
    END IF;

    IF v_strategy LIKE 'slice%' THEN
        -- The hours that can hold a match, newest first: from the newest
        -- row's (or p_before's) to the oldest row's (or p_after's).
        IF v_newest IS NULL THEN
            SELECT pg_catalog.max(d.sent_at), pg_catalog.min(d.sent_at) INTO v_newest, v_oldest
              FROM history.message_search_documents d;  -- two index probes
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
                EXECUTE 'SELECT ARRAY(
                    SELECT d FROM history.message_search_documents d
                     WHERE ' || v_filters || '
                       AND d.sent_at < $9
                     ORDER BY d.sent_at DESC, d.message_id DESC
                     LIMIT $8)'
                   INTO v_slice
                  USING p_query, p_agent, p_conversations, p_windows, p_authors, p_after, p_before,
                        p_count - pg_catalog.cardinality(v_found),
                        pg_catalog.timezone('UTC', '2000-01-01'::timestamp + (v_hour + 1) * interval '1 hour');
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
            EXECUTE 'SELECT ARRAY(
                SELECT d FROM history.message_search_documents d
                 WHERE ' || v_slice_where || '
                 ORDER BY d.sent_at DESC, d.message_id DESC
                 LIMIT $8)'
               INTO v_slice
              USING p_query, p_agent, p_conversations, p_windows, p_authors, p_after, p_before,
                    p_count - pg_catalog.cardinality(v_found), v_keys,
                    pg_catalog.timezone('UTC', '2000-01-01'::timestamp + (v_hour - v_width + 1) * interval '1 hour'),
                    pg_catalog.timezone('UTC', '2000-01-01'::timestamp + (v_hour + 1) * interval '1 hour');
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

    IF v_strategy IN ('probe', 'walk') THEN  -- forced (a walk needs a list: probe all of the agent's conversations)
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

RESET ROLE;
COMMIT;
