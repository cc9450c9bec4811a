-- _newest_matches (white-box): every strategy returns exactly what the plain
-- query returns: the newest p_count matches by (sent_at, message_id) desc in
-- the conversations, with the author and time filters, and inside the
-- visible windows when given (the count counts only rows inside them).
-- Small thresholds force each strategy on a small world.
BEGIN;
SELECT plan(84);

-- The agent reads three conversations; a fourth it never joined. It left
-- the busiest one, n-a, on Feb 2 and came back on Feb 3 at noon. Messages
-- alternate between two words, many share a sent_at (ties by message id),
-- two authors.
DO $world$
DECLARE
    k integer;
    v_conv text;
BEGIN
    PERFORM history.upsert_account('n-bot', 'agent');
    PERFORM history.upsert_account('n-ann', 'person');
    PERFORM history.upsert_account('n-ben', 'person');
    FOREACH v_conv IN ARRAY ARRAY['n-a', 'n-b', 'n-c', 'n-other'] LOOP
        PERFORM history.upsert_conversation(v_conv, 'group');
        PERFORM history.add_member(v_conv, 'n-ann', '2026-01-01 00:00+00');
        PERFORM history.add_member(v_conv, 'n-ben', '2026-01-01 00:00+00');
        IF v_conv <> 'n-other' THEN
            PERFORM history.add_member(v_conv, 'n-bot', '2026-01-01 00:00+00');
        END IF;
    END LOOP;
    FOR k IN 1 .. 240 LOOP
        PERFORM history.post_message(
            pg_catalog.format('n-%s', lpad(k::text, 3, '0')),
            (ARRAY['n-a', 'n-a', 'n-b', 'n-c', 'n-other'])[1 + k % 5],
            CASE WHEN k % 3 = 0 THEN 'n-ben' ELSE 'n-ann' END,
            CASE WHEN k % 4 = 0 THEN 'walnut pecan' WHEN k % 7 = 0 THEN 'pecan' ELSE 'hazel' END,
            timestamptz '2026-02-01 00:00+00' + (k / 3) * interval '1 hour');
    END LOOP;
    -- Two old matches, years before the rest (a slice walk must reach them).
    PERFORM history.post_message('n-old-1', 'n-b', 'n-ann', 'walnut pecan', '2019-06-01 12:00+00');
    PERFORM history.post_message('n-old-2', 'n-c', 'n-ben', 'pecan', '2019-06-02 23:59:59.999999+00');
    PERFORM history.remove_member('n-a', 'n-bot', '2026-02-02 00:00+00');
    PERFORM history.add_member('n-a', 'n-bot', '2026-02-03 12:00+00');
END
$world$;

CREATE TEMP TABLE keys AS
SELECT (SELECT account_key FROM history.accounts WHERE account_id = 'n-bot') AS bot,
       (SELECT account_key FROM history.accounts WHERE account_id = 'n-ben') AS ben,
       ARRAY(SELECT conversation_key FROM history.conversations
              WHERE conversation_id IN ('n-a', 'n-b', 'n-c') ORDER BY 1) AS convs;

-- The plain answer, and the function's, as message ids in order.
CREATE FUNCTION pg_temp.expected(p_query tsquery, p_convs bigint[], p_authors bigint[],
                                 p_after timestamptz, p_before timestamptz, p_count integer)
RETURNS text[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(message_id ORDER BY sent_at DESC, message_id DESC), '{}') FROM (
        SELECT d.message_id, d.sent_at FROM history.message_search_documents d
         WHERE d.document @@ p_query AND d.conversation_key = ANY (p_convs)
           AND (p_authors IS NULL OR d.author_key = ANY (p_authors))
           AND (p_after IS NULL OR d.sent_at >= p_after) AND (p_before IS NULL OR d.sent_at < p_before)
         ORDER BY d.sent_at DESC, d.message_id DESC LIMIT p_count) x $$;
CREATE FUNCTION pg_temp.got(p_query tsquery, p_convs bigint[], p_authors bigint[],
                            p_after timestamptz, p_before timestamptz, p_count integer, p_strategy text)
RETURNS text[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(message_id ORDER BY sent_at DESC, message_id DESC), '{}')
      FROM history._newest_matches(1, p_query, (SELECT bot FROM pg_temp.keys), p_convs, NULL, false, p_authors,
                                   p_after, p_before, p_count, p_strategy) $$;

CREATE FUNCTION pg_temp.planner_rows(p_conversation bigint) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE v_plan json;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) SELECT 1 FROM history.message_search_documents d WHERE d.conversation_key = ANY ($1)'
       INTO v_plan USING ARRAY[p_conversation];
    RETURN (v_plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END $$;

-- The same inside windows: p_windows per listed conversation, or (p_member)
-- the agent's membership intervals.
CREATE FUNCTION pg_temp.expected_in(p_query tsquery, p_convs bigint[], p_windows tstzmultirange[],
                                    p_member boolean, p_count integer)
RETURNS text[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(message_id ORDER BY sent_at DESC, message_id DESC), '{}') FROM (
        SELECT d.message_id, d.sent_at FROM history.message_search_documents d
         WHERE d.document @@ p_query
           AND d.conversation_key = ANY (coalesce(p_convs, (SELECT convs FROM pg_temp.keys)))
           AND (p_windows IS NULL
                OR d.sent_at <@ (SELECT w.visible FROM unnest(p_convs, p_windows) w(conversation_key, visible)
                                  WHERE w.conversation_key = d.conversation_key))
           AND (NOT p_member
                OR EXISTS (SELECT 1 FROM history.memberships m
                            WHERE m.account_key = (SELECT bot FROM pg_temp.keys)
                              AND m.conversation_key = d.conversation_key
                              AND tstzrange(m.since, m.until, '[)') @> d.sent_at))
         ORDER BY d.sent_at DESC, d.message_id DESC LIMIT p_count) x $$;
CREATE FUNCTION pg_temp.got_in(p_query tsquery, p_convs bigint[], p_windows tstzmultirange[],
                               p_member boolean, p_count integer, p_strategy text)
RETURNS text[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(message_id ORDER BY sent_at DESC, message_id DESC), '{}')
      FROM history._newest_matches(1, p_query, (SELECT bot FROM pg_temp.keys), p_convs, p_windows, p_member,
                                   NULL, NULL, NULL, p_count, p_strategy) $$;
-- n-a seen only until the agent left it (never back), n-b always, n-c in two stretches.
CREATE TEMP TABLE windows AS
SELECT (SELECT convs FROM keys) AS convs,
       ARRAY['{[2026-01-01 00:00+00,2026-02-02 00:00+00)}',
             '{(,)}',
             '{[2026-02-01 00:00+00,2026-02-01 12:00+00), [2026-02-03 00:00+00,)}']::tstzmultirange[] AS visible,
       (SELECT conversation_key FROM history.conversations WHERE conversation_id = 'n-a') AS busy;

-- few: through the text index
SELECT is(pg_temp.got('walnut | pecan', (SELECT convs FROM keys), NULL, NULL, NULL, 25, 'text'),
          pg_temp.expected('walnut | pecan', (SELECT convs FROM keys), NULL, NULL, NULL, 25),
          'few matches: the text-index plan returns the newest 25');
SELECT is(pg_temp.got('walnut | pecan', NULL, NULL, NULL, NULL, 25, 'text'),
          pg_temp.expected('walnut | pecan', (SELECT convs FROM keys), NULL, NULL, NULL, 25),
          'few matches, all the agent''s conversations: the same 25, never one of a conversation it did not join');

-- walk (per conversation, merged) and slice (hours of the text index newest
-- first; forced, so the first slice is one hour and the next ones grow, whole
-- days among them, until the rest back to 2019 is read at once; or the
-- conversations' whole weeks)
SELECT is(pg_temp.got('walnut | pecan', (SELECT convs FROM keys), NULL, NULL, NULL, 25, s),
          pg_temp.expected('walnut | pecan', (SELECT convs FROM keys), NULL, NULL, NULL, 25),
          s || ': the newest 25 across three conversations, ties by message id')
  FROM unnest(ARRAY['walk', 'slice', 'slice:weeks']) s;
SELECT is(pg_temp.got('pecan', (SELECT convs FROM keys), ARRAY[(SELECT ben FROM keys)],
                      '2026-02-02 00:00+00', '2026-02-03 00:00+00', 10, s),
          pg_temp.expected('pecan', (SELECT convs FROM keys), ARRAY[(SELECT ben FROM keys)],
                           '2026-02-02 00:00+00', '2026-02-03 00:00+00', 10),
          s || ': author and time filters')
  FROM unnest(ARRAY['walk', 'slice', 'slice:weeks']) s;
SELECT is(pg_temp.got('walnut | pecan', (SELECT convs FROM keys), NULL, NULL, NULL, 1000, s),
          pg_temp.expected('walnut | pecan', (SELECT convs FROM keys), NULL, NULL, NULL, 1000),
          s || ': a count above the number of matches returns them all, back to the 2019 ones')
  FROM unnest(ARRAY['walk', 'slice', 'slice:weeks']) s;
SELECT is(pg_temp.got('walnut | pecan', NULL, NULL, NULL, NULL, 60, 'slice'),
          pg_temp.expected('walnut | pecan', (SELECT convs FROM keys), NULL, NULL, NULL, 60),
          'slice over the agent''s conversations (membership test): the newest 60');
SELECT is(pg_temp.got('pecan', (SELECT convs FROM keys), NULL, NULL, '2019-06-03 00:00+00', 5, s),
          ARRAY['n-old-2', 'n-old-1'], s || ': before a time years back, the old matches alone')
  FROM unnest(ARRAY['slice', 'slice:weeks']) s;
SELECT is(pg_temp.got('walnut', (SELECT convs FROM keys), NULL, '2030-01-01 00:00+00', NULL, 5, 'slice'), '{}',
          'slice: after the newest message, nothing');
SELECT is(current_setting('enable_indexscan'), 'on', 'slices restore enable_indexscan');

-- probe: the newest rows of the projection hold enough matches
SELECT is(pg_temp.got('walnut | pecan', (SELECT convs FROM keys), NULL, NULL, NULL, 10, 'probe'),
          pg_temp.expected('walnut | pecan', (SELECT convs FROM keys), NULL, NULL, NULL, 10),
          'probe over listed conversations: the newest 10');
SELECT is(pg_temp.got('walnut | pecan', NULL, NULL, NULL, NULL, 10, 'probe'),
          pg_temp.expected('walnut | pecan', (SELECT convs FROM keys), NULL, NULL, NULL, 10),
          'probe over the agent''s conversations (membership test): the newest 10');
SELECT is(pg_temp.got('pecan', NULL, ARRAY[(SELECT ben FROM keys)], NULL, '2026-02-05 00:00+00', 5, 'probe'),
          pg_temp.expected('pecan', (SELECT convs FROM keys), ARRAY[(SELECT ben FROM keys)], NULL, '2026-02-05 00:00+00', 5),
          'probe: author and time filters');

-- probe too short, then the fallback
SELECT is(pg_temp.got('pecan', (SELECT convs FROM keys), NULL, NULL, NULL, 300, 'probe'),
          pg_temp.expected('pecan', (SELECT convs FROM keys), NULL, NULL, NULL, 300),
          'probe finds too few (count above the matches) for listed conversations: the fallback returns them all');
SELECT is(pg_temp.got('pecan', NULL, NULL, NULL, NULL, 300, 'probe'),
          pg_temp.expected('pecan', (SELECT convs FROM keys), NULL, NULL, NULL, 300),
          'probe finds too few for the agent''s conversations: the fallback returns them all');
SELECT is(current_setting('enable_indexscan'), 'on', 'the fallback restores enable_indexscan');

SELECT is(pg_temp.got('walnut', '{}', NULL, NULL, NULL, 10, 'walk'), '{}',
          'no conversations: nothing');

-- unforced: whatever the estimates choose, the same rows
SELECT is(pg_temp.got('walnut | pecan', (SELECT convs FROM keys), NULL, NULL, NULL, 25, NULL),
          pg_temp.expected('walnut | pecan', (SELECT convs FROM keys), NULL, NULL, NULL, 25),
          'chosen by estimate, listed conversations: the newest 25');
SELECT is(pg_temp.got('hazel', NULL, NULL, NULL, NULL, 25, NULL),
          pg_temp.expected('hazel', (SELECT convs FROM keys), NULL, NULL, NULL, 25),
          'chosen by estimate, all the agent''s conversations: the newest 25');

-- Inside windows: every strategy, the same rows.
SELECT is(pg_temp.got_in('walnut | pecan', (SELECT convs FROM windows), (SELECT visible FROM windows), false, 25, s),
          pg_temp.expected_in('walnut | pecan', (SELECT convs FROM windows), (SELECT visible FROM windows), false, 25),
          'given windows, ' || s || ': the newest 25 inside them')
  FROM unnest(ARRAY['text', 'walk', 'probe', 'slice', 'slice:weeks']) s;
SELECT is(pg_temp.got_in('pecan', (SELECT convs FROM windows), (SELECT visible FROM windows), false, 300, s),
          pg_temp.expected_in('pecan', (SELECT convs FROM windows), (SELECT visible FROM windows), false, 300),
          'given windows, ' || s || ', count above the visible matches: all of them')
  FROM unnest(ARRAY['text', 'walk', 'probe', 'slice', 'slice:weeks']) s;

-- The agent that left a busy conversation: its newest matches are all after
-- it left; the cap of 5 counts only the ones it saw, so the newest 5 of
-- those come back, not nothing.
SELECT is(pg_temp.got_in('hazel', ARRAY[(SELECT busy FROM windows)], ARRAY['{[2026-01-01 00:00+00,2026-02-02 00:00+00)}']::tstzmultirange[], false, 5, s),
          pg_temp.expected_in('hazel', ARRAY[(SELECT busy FROM windows)], ARRAY['{[2026-01-01 00:00+00,2026-02-02 00:00+00)}']::tstzmultirange[], false, 5),
          'left a busy conversation, ' || s || ': the newest 5 matches before leaving')
  FROM unnest(ARRAY['text', 'walk', 'probe', 'slice', 'slice:weeks']) s;
SELECT is(cardinality(pg_temp.got_in('hazel', ARRAY[(SELECT busy FROM windows)], ARRAY['{[2026-01-01 00:00+00,2026-02-02 00:00+00)}']::tstzmultirange[], false, 5, 'probe')),
          5, 'left a busy conversation: five older matches, although every newer one is outside the window');
SELECT ok((SELECT count(*) FROM history.message_search_documents d
            WHERE d.conversation_key = (SELECT busy FROM windows) AND d.document @@ 'hazel'
              AND d.sent_at >= '2026-02-02 00:00+00') > 5,
          'the busy conversation has more than five newer matches the agent did not see');

-- The agent's own membership intervals (it left n-a and came back).
SELECT is(pg_temp.got_in('walnut | pecan', (SELECT convs FROM keys), NULL, true, 25, s),
          pg_temp.expected_in('walnut | pecan', (SELECT convs FROM keys), NULL, true, 25),
          'membership windows, listed conversations, ' || s || ': the newest 25 inside them')
  FROM unnest(ARRAY['text', 'walk', 'probe', 'slice', 'slice:weeks']) s;
SELECT is(pg_temp.got_in('walnut | pecan', NULL, NULL, true, 25, s),
          pg_temp.expected_in('walnut | pecan', NULL, NULL, true, 25),
          'membership windows, all the agent''s conversations, ' || s || ': the newest 25 inside them')
  FROM unnest(ARRAY['text', 'probe', 'slice']) s;
SELECT is(pg_temp.got_in('hazel', NULL, NULL, true, 300, NULL),
          pg_temp.expected_in('hazel', NULL, NULL, true, 300),
          'membership windows, chosen by estimate: the same rows');
SELECT isnt(pg_temp.got_in('hazel', NULL, NULL, true, 300, NULL),
            pg_temp.got_in('hazel', NULL, NULL, false, 300, NULL),
            'membership windows leave out what the agent did not see (the rows differ from any time)');
SELECT is(pg_temp.got_in('walnut | pecan', (SELECT convs FROM windows), (SELECT visible FROM windows), false, 25, NULL),
          pg_temp.expected_in('walnut | pecan', (SELECT convs FROM windows), (SELECT visible FROM windows), false, 25),
          'given windows, chosen by estimate: the same rows');
SELECT is(current_setting('enable_bitmapscan'), 'on', 'the walk restores enable_bitmapscan');

-- The time-bucket keys are the UTC hour and day, whatever the session's time zone.
SET LOCAL TimeZone = 'America/New_York';
SELECT is(history._time_buckets('2019-06-02 23:59:59.999999+00') || history._time_buckets('2019-06-03 00:00+00'),
          ARRAY[2 * (24 * ('2019-06-02'::date - '2000-01-01'::date) + 23), 2 * ('2019-06-02'::date - '2000-01-01'::date) + 1,
                2 * (24 * ('2019-06-03'::date - '2000-01-01'::date)), 2 * ('2019-06-03'::date - '2000-01-01'::date) + 1]::bigint[],
          'the time buckets are the UTC hour (2 * hours since 2000-01-01) and day (2 * days + 1), in any session time zone');
SELECT is((SELECT array_agg(message_id ORDER BY message_id) FROM history.message_search_documents
            WHERE history._time_buckets(sent_at) && ARRAY[2 * ('2019-06-02'::date - '2000-01-01'::date) + 1]::bigint[]),
          ARRAY['n-old-2'], 'the text index finds a row by its day');
SELECT is((SELECT array_agg(message_id ORDER BY message_id) FROM history.message_search_documents
            WHERE history._time_buckets(sent_at) && ARRAY[2 * (24 * ('2019-06-01'::date - '2000-01-01'::date) + 12)]::bigint[]),
          ARRAY['n-old-1'], 'the text index finds a row by its hour');
-- The (conversation, week) keys: weeks of seven UTC days from Saturday 2000-01-01, before it too.
SELECT is(history._conversation_weeks(7, '2000-01-07 23:59:59.999999+00') || history._conversation_weeks(7, '2000-01-08 00:00+00')
          || history._conversation_weeks(7, '1999-12-31 23:59+00') || history._conversation_weeks(8, '2000-01-01 00:00+00'),
          ARRAY[7 * 4194304 + 2097152, 7 * 4194304 + 2097153, 7 * 4194304 + 2097151, 8 * 4194304 + 2097152]::bigint[],
          'a (conversation, week) key is conversation * 2^22 + UTC week + 2^21, in any session time zone; a week starts on Saturday 00:00 UTC');
SELECT is((SELECT array_agg(message_id ORDER BY message_id) FROM history.message_search_documents
            WHERE history._conversation_weeks(conversation_key, sent_at)
                  && history._conversation_weeks((SELECT conversation_key FROM history.conversations WHERE conversation_id = 'n-b'),
                                                 '2019-06-01 00:00+00')),
          (SELECT array_agg(message_id ORDER BY message_id) FROM history.message_search_documents
            WHERE conversation_key = (SELECT conversation_key FROM history.conversations WHERE conversation_id = 'n-b')
              AND sent_at >= '2019-06-01 00:00+00' AND sent_at < '2019-06-08 00:00+00'),
          'the text index finds a conversation''s rows by their week');
SELECT cmp_ok((SELECT count(*) FROM history.message_search_documents
                WHERE conversation_key = (SELECT conversation_key FROM history.conversations WHERE conversation_id = 'n-b')
                  AND sent_at >= '2019-06-01 00:00+00' AND sent_at < '2019-06-08 00:00+00'), '>', 0::bigint,
              'that conversation has rows in that week (the comparison above is not of two empty sets)');
RESET TimeZone;

SELECT throws_ok($$ SELECT pg_temp.got_in('hazel', (SELECT convs FROM windows), ARRAY['{(,)}']::tstzmultirange[], false, 5, NULL) $$,
                 'HS001', NULL, 'windows not one per conversation: HS001');
SELECT throws_ok($$ SELECT pg_temp.got('hazel', NULL, NULL, NULL, NULL, 5, 'slice:bogus') $$,
                 'HS001', 'unknown strategy ''slice:bogus''', 'an unknown strategy: HS001');

-- A long list: 300 more small conversations (two messages each), so the list
-- is not tested inside the text index. Chosen by estimate (the list's rows
-- from history._listed_rows, slices sized from them, the list ANDed through
-- its index or filtered) or forced: the same rows.
DO $more$
BEGIN
    FOR k IN 1 .. 300 LOOP
        PERFORM history.upsert_conversation(pg_catalog.format('n-l-%s', k), 'group');
        PERFORM history.add_member(pg_catalog.format('n-l-%s', k), 'n-bot', '2026-01-01 00:00+00');
        PERFORM history.post_message(pg_catalog.format('n-l-%s-1', k), pg_catalog.format('n-l-%s', k), 'n-bot',
                                     'hazel walnut', timestamptz '2026-02-01 00:00+00' + k * interval '7 minutes');
        PERFORM history.post_message(pg_catalog.format('n-l-%s-2', k), pg_catalog.format('n-l-%s', k), 'n-bot',
                                     'pecan', timestamptz '2026-02-01 00:00+00' + k * interval '11 minutes');
    END LOOP;
END
$more$;
ANALYZE history.message_search_documents, history.conversations;
CREATE TEMP TABLE long_list AS
SELECT ARRAY(SELECT conversation_key FROM history.conversations
              WHERE conversation_id LIKE 'n-l-%' OR conversation_id IN ('n-a', 'n-b', 'n-c') ORDER BY 1) AS convs,
       (SELECT conversation_key FROM history.conversations WHERE conversation_id = 'n-l-7') AS small;
SELECT is(pg_temp.got('walnut | pecan', (SELECT convs FROM long_list), NULL, NULL, NULL, 3, NULL),
          pg_temp.expected('walnut | pecan', (SELECT convs FROM long_list), NULL, NULL, NULL, 3),
          'a long list, few wanted of many matches, chosen by estimate (slices): the same rows');
SELECT is(pg_temp.got('hazel', (SELECT convs FROM long_list), NULL, NULL, NULL, 200, NULL),
          pg_temp.expected('hazel', (SELECT convs FROM long_list), NULL, NULL, NULL, 200),
          'a long list, many wanted, chosen by estimate: the same rows');
SELECT is(pg_temp.got('walnut | pecan', (SELECT convs FROM long_list), NULL, NULL, NULL, 40, 'slice'),
          pg_temp.expected('walnut | pecan', (SELECT convs FROM long_list), NULL, NULL, NULL, 40),
          'a long list in slices: the same rows');
-- Each way a long list's slice is read (ANDed with the list's rows in the
-- slice's hours, filtered by the list, or the list's rows tested for the
-- text): the same rows, with filters and inside windows too.
SELECT is(pg_temp.got('walnut | pecan', (SELECT convs FROM long_list), NULL, NULL, NULL, 40, s),
          pg_temp.expected('walnut | pecan', (SELECT convs FROM long_list), NULL, NULL, NULL, 40),
          'a long list, ' || s || ': the same rows')
  FROM unnest(ARRAY['slice:and', 'slice:filter', 'slice:listed', 'slice:weeks']) s;
SELECT is(pg_temp.got('pecan', (SELECT convs FROM long_list), ARRAY[(SELECT bot FROM keys)],
                      '2026-02-01 10:00+00', '2026-02-02 08:00+00', 10, s),
          pg_temp.expected('pecan', (SELECT convs FROM long_list), ARRAY[(SELECT bot FROM keys)],
                           '2026-02-01 10:00+00', '2026-02-02 08:00+00', 10),
          'a long list, ' || s || ': author and time filters')
  FROM unnest(ARRAY['slice:and', 'slice:filter', 'slice:listed', 'slice:weeks']) s;
SELECT is(pg_temp.got_in('walnut | pecan', (SELECT convs FROM long_list), NULL, true, 300, s),
          pg_temp.expected_in('walnut | pecan', (SELECT convs FROM long_list), NULL, true, 300),
          'a long list, membership windows, ' || s || ': the same rows')
  FROM unnest(ARRAY['slice:and', 'slice:filter', 'slice:listed', 'slice:weeks']) s;
SELECT is(pg_temp.got_in('hazel | pecan', (SELECT convs FROM long_list),
                         ARRAY(SELECT '{[2026-02-01 06:00+00,2026-02-01 20:00+00)}'::tstzmultirange
                                 FROM unnest((SELECT convs FROM long_list))), false, 30, s),
          pg_temp.expected_in('hazel | pecan', (SELECT convs FROM long_list),
                              ARRAY(SELECT '{[2026-02-01 06:00+00,2026-02-01 20:00+00)}'::tstzmultirange
                                      FROM unnest((SELECT convs FROM long_list))), false, 30),
          'a long list, given windows, ' || s || ': the same rows')
  FROM unnest(ARRAY['slice:and', 'slice:filter', 'slice:listed', 'slice:weeks']) s;

-- The list's rows: ANALYZE's count of distinct conversations comes from a
-- sample and can be far too small (set here to 3, with one most common
-- value); the conversations' count is a floor under it, so one small
-- conversation is estimated small where the planner takes it to hold as many
-- rows as the busiest.
SELECT cmp_ok(history._listed_rows(ARRAY[(SELECT small FROM long_list)], 1000), '<=', 10::float8,
              'one small conversation of a thousand rows: a small estimate');
ALTER TABLE history.message_search_documents ALTER COLUMN conversation_key SET (n_distinct = 3),
                                             ALTER COLUMN conversation_key SET STATISTICS 1;
ANALYZE history.message_search_documents;
SELECT cmp_ok(pg_temp.planner_rows((SELECT small FROM long_list)), '>', 50::float8,
              'with a distinct count of 3 the planner takes one small conversation to hold as many rows as the busiest');
SELECT cmp_ok(history._listed_rows(ARRAY[(SELECT small FROM long_list)], 1000), '<=', 10::float8,
              'with a distinct count of 3, the conversations'' count keeps the estimate small');

SELECT * FROM finish();
ROLLBACK;
