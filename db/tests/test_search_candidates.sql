-- The bounded candidate passes (docs/decisions.md, "Candidates"): a search
-- counts exclusions over at most search_settings.max_counted_candidates and
-- ranks at most max_candidates of the newest matches; counts and hits are
-- exact over those, and the audit row says when a pass reached its cap.
-- Most cases below set both caps to one value.
BEGIN;
SELECT plan(25);

SELECT is((SELECT max_candidates FROM history.search_settings), 2000, 'max_candidates defaults to 2000');
SELECT is((SELECT max_counted_candidates FROM history.search_settings), 500, 'max_counted_candidates defaults to 500');
SELECT has_column('history', 'search_audit', 'candidates_capped', 'the auditors'' view shows whether the cap was reached');

-- The agent reads #plums with ann and a direct conversation with ben. A run
-- in #plums has ann as its audience, so only #plums has eligible windows.
-- Every message matches "plum"; the direct ones are the newest.
DO $world$
BEGIN
    PERFORM history.upsert_account('c-bot', 'agent');
    PERFORM history.upsert_account('c-ann', 'person');
    PERFORM history.upsert_account('c-ben', 'person');
    PERFORM history.upsert_conversation('c-plums', 'channel');
    PERFORM history.upsert_conversation('c-dm', 'direct');
    PERFORM history.add_member('c-plums', 'c-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('c-plums', 'c-ann', '2026-01-01 00:00+00');
    PERFORM history.add_member('c-dm', 'c-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('c-dm', 'c-ben', '2026-01-01 00:00+00');
    PERFORM history.post_message('c-p1', 'c-plums', 'c-ann', 'plum one', '2026-02-01 12:00+00');
    PERFORM history.post_message('c-p2', 'c-plums', 'c-ann', 'plum two', '2026-02-02 12:00+00');
    PERFORM history.post_message('c-p3', 'c-plums', 'c-ann', 'plum three', '2026-02-03 12:00+00');
    PERFORM history.post_message('c-p4', 'c-plums', 'c-ann', 'plum four', '2026-02-04 12:00+00');
    PERFORM history.post_message('c-d1', 'c-dm', 'c-ben', 'plum secret', '2026-02-05 12:00+00');
    PERFORM history.post_message('c-d2', 'c-dm', 'c-ben', 'plum secret too', '2026-02-06 12:00+00');
    PERFORM history.post_message('c-cur', 'c-plums', 'c-ann', 'question', '2026-03-01 12:00+00');
END
$world$;

CREATE TEMP TABLE runs (cap integer PRIMARY KEY, token uuid NOT NULL) ON COMMIT DROP;
CREATE TEMP TABLE results (cap integer PRIMARY KEY, r history.search_result NOT NULL) ON COMMIT DROP;
CREATE FUNCTION pg_temp.search_with_cap(p_cap integer, p_counted integer DEFAULT NULL) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v_run uuid := history.begin_run('c-bot', 'c-plums', 'c-ann', 'c-cur');
BEGIN
    UPDATE history.search_settings SET max_candidates = p_cap, max_counted_candidates = coalesce(p_counted, p_cap);
    INSERT INTO pg_temp.runs VALUES (p_cap, v_run);
    INSERT INTO pg_temp.results VALUES (p_cap, history._search_history(v_run, 'plum', p_limit => 20));
END
$$;
CREATE FUNCTION pg_temp.hits(p_cap integer) RETURNS text[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(h.message_id ORDER BY h.message_id), '{}')
      FROM pg_temp.results x, unnest((x.r).hits) h WHERE x.cap = p_cap $$;
CREATE FUNCTION pg_temp.audit(p_cap integer) RETURNS history.search_audit LANGUAGE sql AS $$
    SELECT a FROM history.search_audit a JOIN pg_temp.results x ON a.search_event_id = (x.r).search_event_id
     WHERE x.cap = p_cap $$;

SELECT pg_temp.search_with_cap(c) FROM unnest(ARRAY[100, 6, 5, 3]) c;

-- No cap reached: every match examined.
SELECT is(pg_temp.hits(100), ARRAY['c-p1', 'c-p2', 'c-p3', 'c-p4'], 'under the cap every eligible match is a hit');
SELECT is((pg_temp.audit(100)).excluded_audience, 2, 'under the cap both direct messages are counted under audience');
SELECT is((pg_temp.audit(100)).candidates_capped, false, 'under the cap the audit says so');

-- Exactly at the cap: six matches in the agent's conversations, cap six.
SELECT is(pg_temp.hits(6), ARRAY['c-p1', 'c-p2', 'c-p3', 'c-p4'], 'a cap equal to the match count loses nothing');
SELECT is((pg_temp.audit(6)).excluded_audience, 2, 'a cap equal to the match count counts everything');
SELECT is((pg_temp.audit(6)).candidates_capped, false, 'a cap equal to the match count is not reported as reached');

-- Cap five: the counting pass stops before the oldest match (c-p1, eligible,
-- not an exclusion), the ranking pass (four matches in #plums) does not.
SELECT is(pg_temp.hits(5), ARRAY['c-p1', 'c-p2', 'c-p3', 'c-p4'], 'the ranking pass has its own cap: #plums still fits');
SELECT is((pg_temp.audit(5)).excluded_audience, 2, 'the counting pass examines the newest five: both direct messages');
SELECT is((pg_temp.audit(5)).candidates_capped, true, 'the counting pass reached the cap: the audit says so');

-- Cap three: the counting pass sees d2, d1, p4; the ranking pass the newest
-- three of #plums. The direct messages never become hits whatever the cap.
SELECT is(pg_temp.hits(3), ARRAY['c-p2', 'c-p3', 'c-p4'], 'at cap three only the newest three eligible matches are ranked');
SELECT is((pg_temp.audit(3)).excluded_audience, 2, 'at cap three the newest three matches hold both direct messages');
SELECT is((pg_temp.audit(3)).candidates_capped, true, 'at cap three the audit says the cap was reached');
SELECT is((pg_temp.audit(3)).hit_count, 3, 'the audit lists the three hits');

-- Cap one: the counting pass sees only d2.
SELECT pg_temp.search_with_cap(1);
SELECT is(pg_temp.hits(1), ARRAY['c-p4'], 'at cap one the newest eligible match is the only hit');
SELECT is((pg_temp.audit(1)).excluded_audience, 1, 'at cap one only the newest match (d2) is counted');

-- The caps are independent: count over the newest one, rank over 50.
SELECT pg_temp.search_with_cap(50, 1);
SELECT is(pg_temp.hits(50), ARRAY['c-p1', 'c-p2', 'c-p3', 'c-p4'], 'a counting cap of one does not limit the ranking');
SELECT is((pg_temp.audit(50)).excluded_audience, 1, 'a counting cap of one counts only the newest match');
SELECT is((pg_temp.audit(50)).candidates_capped, true, 'a counting pass at its cap is reported');

-- The agent that left a busy conversation (SPEC §9: caps bound work, never
-- eligibility). It read #busy with ann until Feb 10; after it left, five
-- newer "kiwi" messages. With a cap of three, the three newest matches of
-- the conversation are all outside its window; the cap counts only matches
-- inside it, so the two it saw are still found.
DO $busy$
DECLARE
    k integer;
BEGIN
    PERFORM history.upsert_conversation('c-busy', 'channel');
    PERFORM history.add_member('c-busy', 'c-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('c-busy', 'c-ann', '2026-01-01 00:00+00');
    PERFORM history.post_message('c-k1', 'c-busy', 'c-ann', 'kiwi early', '2026-02-01 12:00+00');
    PERFORM history.post_message('c-k2', 'c-busy', 'c-ann', 'kiwi later', '2026-02-02 12:00+00');
    PERFORM history.remove_member('c-busy', 'c-bot', '2026-02-10 00:00+00');
    FOR k IN 1 .. 5 LOOP
        PERFORM history.post_message('c-k-after-' || k, 'c-busy', 'c-ann', 'kiwi unseen',
                                     timestamptz '2026-02-10 12:00+00' + k * interval '1 hour');
    END LOOP;
END
$busy$;
CREATE FUNCTION pg_temp.kiwi_hits(p_audience text[]) RETURNS text[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(h.message_id ORDER BY h.message_id), '{}')
      FROM unnest((history._search_history(history.begin_run('c-bot', 'c-plums', 'c-ann', 'c-cur', '{}', p_audience),
                                          'kiwi', p_limit => 20)).hits) h $$;
UPDATE history.search_settings SET max_candidates = 3, max_counted_candidates = 3;
SELECT is(pg_temp.kiwi_hits(NULL), ARRAY['c-k1', 'c-k2'],
          'left a busy conversation, default audience: newer matches it may not see do not use up the cap of three');
SELECT is(pg_temp.kiwi_hits('{}'), ARRAY['c-k1', 'c-k2'],
          'left a busy conversation, no audience (its own windows): the same two');
UPDATE history.search_settings SET max_candidates = 1, max_counted_candidates = 1;
SELECT is(pg_temp.kiwi_hits(NULL), ARRAY['c-k2'],
          'left a busy conversation, cap one: the newest match it saw');

SELECT throws_ok($$ UPDATE history.search_settings SET max_candidates = 0 $$, '23514', NULL,
                 'max_candidates must be at least 1');

SELECT * FROM finish();
ROLLBACK;
