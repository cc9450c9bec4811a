-- The search surface (SPEC §3, §4): query parsing, arguments, run tokens,
-- ranking, reasons, audit (digest, no query text, trace), evidence, budget.
BEGIN;
SELECT plan(117);

-- ------------------------------------------------------------------ the world
DO $world$
DECLARE
    k integer;
BEGIN
    PERFORM history.upsert_account('q-bot', 'agent');
    PERFORM history.upsert_account('q-ann', 'person');
    PERFORM history.upsert_account('q-ben', 'person');
    PERFORM history.upsert_conversation('q-chan', 'channel');
    PERFORM history.upsert_conversation('q-big', 'channel');
    PERFORM history.add_member('q-chan', 'q-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('q-chan', 'q-ann', '2026-01-01 00:00+00');
    PERFORM history.add_member('q-chan', 'q-ben', '2026-01-01 00:00+00');
    PERFORM history.add_member('q-big', 'q-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('q-big', 'q-ann', '2026-01-01 00:00+00');

    PERFORM history.post_message('q-rank3', 'q-chan', 'q-ben', 'kiwi mango papaya', '2026-01-10 12:00+00');
    PERFORM history.post_message('q-rank2', 'q-chan', 'q-ben', 'kiwi mango salad', '2026-01-20 12:00+00');
    PERFORM history.post_message('q-rank1', 'q-chan', 'q-ben', 'kiwi smoothie', '2026-01-30 12:00+00');
    PERFORM history.post_message('q-apple', 'q-chan', 'q-ben', 'apple pie recipe', '2026-02-01 12:00+00');
    PERFORM history.post_message('q-banana', 'q-chan', 'q-ben', 'banana split', '2026-02-02 12:00+00');
    PERFORM history.post_message('q-applesauce', 'q-chan', 'q-ben', 'applesauce cake', '2026-02-03 12:00+00');
    PERFORM history.post_message('q-carrot', 'q-chan', 'q-ben', 'carrot soup', '2026-02-04 12:00+00');
    PERFORM history.post_message('q-obrien', 'q-chan', 'q-ben', E'o''brien wrote back\\slash', '2026-02-05 12:00+00');
    PERFORM history.post_message('q-url', 'q-chan', 'q-ben', 'see http://example.com/apple?x=1&y=2 or mail q-ben@example.com', '2026-02-06 12:00+00');
    PERFORM history.post_message('q-url2', 'q-chan', 'q-ben', E'links http://x.com/a(b and x.com/a:b and http://x.com/it''s', '2026-02-07 12:00+00');
    PERFORM history.post_message('q-n1', 'q-chan', 'q-ann', 'hello there', '2026-02-09 12:00+00');
    PERFORM history.post_message('q-xylo', 'q-chan', 'q-ben', 'the xylophonist plays quokka songs', '2026-02-10 12:00+00');
    PERFORM history.post_message('q-n2', 'q-chan', 'q-ann', 'see you', '2026-02-11 12:00+00');
    PERFORM history.post_message('tie-old', 'q-chan', 'q-ben', 'tangerine', '2026-03-01 12:00+00');
    PERFORM history.post_message('tie-b', 'q-chan', 'q-ben', 'tangerine', '2026-03-02 12:00+00');
    PERFORM history.post_message('tie-a', 'q-chan', 'q-ben', 'tangerine', '2026-03-02 12:00+00');
    PERFORM history.post_message('q-cur', 'q-chan', 'q-ann', 'question', '2026-06-01 12:00+00');

    -- 450 messages that all match "budget", one a minute.
    FOR k IN 1 .. 450 LOOP
        PERFORM history.post_message(pg_catalog.format('big-%s', lpad(k::text, 3, '0')), 'q-big', 'q-ann',
                                     'budget filler', timestamptz '2026-03-01 00:00+00' + k * interval '1 minute');
    END LOOP;
    PERFORM history.post_message('big-cur', 'q-big', 'q-ann', 'question', '2026-06-01 12:00+00');
END
$world$;

CREATE TEMP TABLE runs (name text PRIMARY KEY, token uuid NOT NULL) ON COMMIT DROP;
INSERT INTO runs VALUES
    ('q',      history.begin_run('q-bot', 'q-chan', 'q-ann', 'q-cur')),
    ('audit',  history.begin_run('q-bot', 'q-chan', 'q-ann', 'q-cur')),
    ('ended',  history.begin_run('q-bot', 'q-chan', 'q-ann', 'q-cur')),
    ('limits', history.begin_run('q-bot', 'q-big', 'q-ann', 'big-cur')),
    ('big',    history.begin_run('q-bot', 'q-big', 'q-ann', 'big-cur')),
    ('partial', history.begin_run('q-bot', 'q-big', 'q-ann', 'big-cur'));

CREATE TEMP TABLE searches (label text PRIMARY KEY, r history.search_result NOT NULL) ON COMMIT DROP;

CREATE FUNCTION pg_temp.tok(p_run text) RETURNS uuid LANGUAGE sql AS $$ SELECT token FROM pg_temp.runs WHERE name = p_run $$;
CREATE FUNCTION pg_temp.srt(p text[]) RETURNS text[] LANGUAGE sql IMMUTABLE AS
$$ SELECT coalesce(array_agg(x ORDER BY x COLLATE "C"), '{}') FROM unnest(p) x $$;

-- Search and keep the result; return the hit ids in rank order, or the SQLSTATE if it failed.
CREATE FUNCTION pg_temp.s(p_label text, p_run text, p_query text, p_speaker text DEFAULT 'anyone',
                          p_after timestamptz DEFAULT NULL, p_before timestamptz DEFAULT NULL, p_limit integer DEFAULT 20)
RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
    v history.search_result;
BEGIN
    BEGIN
        v := history._search_history(pg_temp.tok(p_run), p_query, p_speaker, p_after, p_before, p_limit);
    EXCEPTION WHEN OTHERS THEN
        RETURN ARRAY['ERROR ' || SQLSTATE || ': ' || SQLERRM];
    END;
    INSERT INTO pg_temp.searches VALUES (p_label, v);
    RETURN ARRAY(SELECT h.message_id FROM unnest(v.hits) WITH ORDINALITY h(message_id) ORDER BY ordinality);
END
$$;
CREATE FUNCTION pg_temp.r(p_label text) RETURNS history.search_result LANGUAGE sql AS
$$ SELECT s.r FROM pg_temp.searches s WHERE s.label = p_label $$;
CREATE FUNCTION pg_temp.ev(p_label text) RETURNS history.conversation_search_events LANGUAGE sql AS
$$ SELECT e FROM history.conversation_search_events e WHERE e.search_event_id = (pg_temp.r(p_label)).search_event_id $$;
CREATE FUNCTION pg_temp.events(p_run text) RETURNS bigint LANGUAGE sql AS
$$ SELECT count(*) FROM history.conversation_search_events e JOIN history.runs r USING (run_key) WHERE r.run_token = pg_temp.tok(p_run) $$;
CREATE FUNCTION pg_temp.ids(p jsonb) RETURNS text[] LANGUAGE sql IMMUTABLE AS
$$ SELECT coalesce(array_agg(x->>'message_id' ORDER BY o), '{}') FROM jsonb_array_elements(p) WITH ORDINALITY e(x, o) $$;

-- ------------------------------------------------------------------ OR semantics and operator characters
-- q-url has apple as a segment of a URL's path (docs/text-analysis.md).
SELECT is(pg_temp.srt(pg_temp.s('or', 'q', 'apple banana')), pg_temp.srt(ARRAY['q-apple', 'q-banana', 'q-url']),
          'OR semantics: a message containing only one of the terms is found');

CREATE TEMP TABLE odd_queries (n serial, query text, expected text[]) ON COMMIT DROP;
INSERT INTO odd_queries (query, expected) VALUES
    ('!apple',                   ARRAY['q-apple', 'q-url']),
    ('apple & banana',           ARRAY['q-apple', 'q-url', 'q-banana']),
    ('apple | banana',           ARRAY['q-apple', 'q-url', 'q-banana']),
    ('apple:*',                  ARRAY['q-apple', 'q-url']),
    ('apple:A',                  ARRAY['q-apple', 'q-url']),
    ('(apple',                   ARRAY['q-apple', 'q-url']),
    ('apple)) ((banana',         ARRAY['q-apple', 'q-url', 'q-banana']),
    ('"apple',                   ARRAY['q-apple', 'q-url']),
    (E'apple''',                 ARRAY['q-apple', 'q-url']),
    (E'''apple'' | ''banana''',  ARRAY['q-apple', 'q-url', 'q-banana']),
    (E'apple\\',                 ARRAY['q-apple', 'q-url']),
    (E'back\\slash',             ARRAY['q-obrien']),
    (E'o''brien',                ARRAY['q-obrien']),
    ('apple <-> banana',         ARRAY['q-apple', 'q-url', 'q-banana']),
    ('apple <2> banana',         ARRAY['q-apple', 'q-url', 'q-banana']),
    ('!(apple & !banana)',       ARRAY['q-apple', 'q-url', 'q-banana']),
    ('!&|():*<->',               '{}'),
    (E'''',                      '{}'),
    (E'\\',                      '{}'),
    (E'\\''\\''',                '{}'),
    ('http://example.com/apple?x=1&y=2', ARRAY['q-url']),
    ('http://x.com/a(b',         ARRAY['q-url2']),
    ('x.com/a:b',                ARRAY['q-url2']),
    (E'http://x.com/it''s',      ARRAY['q-url2']),
    ('mail q-ben@example.com ''quoted'' path /usr/lib/x:y', ARRAY['q-url']),
    (repeat('apple ', 650),      ARRAY['q-apple', 'q-url']);
SELECT is(pg_temp.srt(pg_temp.s('odd' || o.n, 'q', o.query)), pg_temp.srt(o.expected),
          pg_catalog.format('operator characters are words, never operators: %s', left(o.query, 40)))
  FROM odd_queries o ORDER BY o.n;

-- ------------------------------------------------------------------ empty queries, arguments
SELECT is(pg_temp.events('q'), (SELECT count(*) FROM searches s WHERE (s.r).search_event_id IN
                                   (SELECT e.search_event_id FROM history.conversation_search_events e
                                      JOIN history.runs r USING (run_key) WHERE r.run_token = pg_temp.tok('q'))),
          'one audit row per search call so far');
CREATE TEMP TABLE n_events ON COMMIT DROP AS SELECT pg_temp.events('q') AS n;
SELECT is(pg_temp.s('empty', 'q', ''), '{}'::text[], 'empty query: no hits');
SELECT is((pg_temp.r('empty')).status, 'ok', 'empty query: status ok');
SELECT is(pg_temp.s('stop', 'q', 'the and of it'), '{}'::text[], 'stop words only: no hits');
SELECT is((pg_temp.r('stop')).status, 'ok', 'stop words only: status ok');
SELECT is(pg_temp.events('q'), (SELECT n + 2 FROM n_events), 'empty and stop-word queries are each audited (one row each)');
SELECT is(ARRAY[(pg_temp.ev('empty')).query_term_count, (pg_temp.ev('stop')).query_term_count], ARRAY[0, 0],
          'the audit row records no searchable term');

SELECT throws_ok($$SELECT history._search_history(pg_temp.tok('q'), NULL)$$, 'HS001', NULL, 'null query is HS001');
SELECT throws_ok($$SELECT history._search_history(pg_temp.tok('q'), 'apple', 'everyone')$$, 'HS001', NULL, 'unknown speaker is HS001');
SELECT throws_ok($$SELECT history._search_history(pg_temp.tok('q'), 'apple', '')$$, 'HS001', NULL, 'empty speaker is HS001');
SELECT throws_ok($$SELECT history._search_history(pg_temp.tok('q'), 'apple', 'anyone', NULL, NULL, 0)$$, 'HS001', NULL, 'limit 0 is HS001');
SELECT throws_ok($$SELECT history._search_history(pg_temp.tok('q'), 'apple', 'anyone', NULL, NULL, -5)$$, 'HS001', NULL, 'negative limit is HS001');
SELECT throws_ok($$SELECT history._search_history(pg_temp.tok('q'), 'apple', 'anyone', '2026-03-01', '2026-02-01')$$, 'HS001', NULL,
                 'p_after later than p_before is HS001');
SELECT is(pg_temp.s('same_time', 'q', 'apple', 'anyone', '2026-02-01 12:00+00', '2026-02-01 12:00+00'), '{}'::text[],
          'p_after = p_before is a valid, empty window');
SELECT throws_ok($$SELECT history._search_history(NULL, 'apple')$$, 'HS001', NULL, 'null run token is HS001');
SELECT throws_ok($$SELECT history._search_history(gen_random_uuid(), 'apple')$$, 'HS002', NULL, 'unknown run token is HS002');

-- The query's size: over search_settings.max_query_chars (4 000) characters is
-- HS001 naming its length and the maximum, before any other work.
CREATE TEMP TABLE size_events ON COMMIT DROP AS SELECT pg_temp.events('q') AS n;
SELECT throws_ok($$SELECT history._search_history(pg_temp.tok('q'), repeat('a', 4001))$$, 'HS001',
                 'p_query is 4001 characters long, over the maximum of 4000',
                 'a query of 4 001 characters is HS001 naming its length and the maximum');
SELECT throws_ok($$SELECT history._search_history(gen_random_uuid(), repeat('apple ', 1000))$$, 'HS001',
                 'p_query is 6000 characters long, over the maximum of 4000',
                 'the size is checked before anything else (an unknown run gets HS001 for its query, not HS002)');
SELECT is(pg_temp.events('q'), (SELECT n FROM size_events), 'a refused query writes no audit row');
SELECT is(pg_temp.s('max_chars', 'q', repeat('x', 3994) || ' apple'), ARRAY['q-apple', 'q-url'],
          'a query of exactly 4 000 characters is searched');
SELECT is(pg_temp.s('max_chars_multibyte', 'q', repeat('é', 3994) || ' apple'), ARRAY['q-apple', 'q-url'],
          'the maximum counts characters, not bytes (4 000 characters, 7 994 bytes)');
UPDATE history.search_settings SET max_query_chars = 10;
SELECT throws_ok($$SELECT history._search_history(pg_temp.tok('q'), 'apple banana')$$, 'HS001',
                 'p_query is 12 characters long, over the maximum of 10', 'the maximum is the setting''s');
UPDATE history.search_settings SET max_query_chars = 4000;
SELECT throws_ok($$SELECT history._search_history(pg_temp.tok('q'), repeat('apple ', 11184811))$$, 'HS001',
                 'p_query is 67108866 characters long, over the maximum of 4000',
                 'a 64 MB query is refused the same way (no internal error, no work on its text)');
SELECT lives_ok($$SELECT history.end_run(pg_temp.tok('ended'))$$, 'end_run ends a run');
SELECT throws_ok($$SELECT history._search_history(pg_temp.tok('ended'), 'apple')$$, 'HS002', NULL, 'an ended run is HS002');
SELECT throws_ok($$SELECT history.end_run(pg_temp.tok('ended'))$$, 'HS002', NULL, 'ending an ended run is HS002');
SELECT throws_ok($$SELECT history.end_run(gen_random_uuid())$$, 'HS002', NULL, 'ending an unknown run is HS002');

SELECT is(cardinality(pg_temp.s('limit50', 'limits', 'budget', 'anyone', NULL, NULL, 50)), 20, 'limit 50 returns 20 hits');
SELECT is((pg_temp.ev('limit50')).effective_limit, 20, 'limit 50: effective_limit 20 in the audit');
SELECT is(cardinality(pg_temp.s('limitnull', 'limits', 'budget', NULL, NULL, NULL, NULL)), 8, 'null limit returns 8 hits');
SELECT is((pg_temp.ev('limitnull')).effective_limit, 8, 'null limit: effective_limit 8');
SELECT is((pg_temp.ev('limitnull')).speaker, 'anyone', 'null speaker is recorded as anyone');
SELECT is(cardinality((history._search_history(pg_temp.tok('limits'), 'budget')).hits), 8, 'defaults: limit 8');
SELECT is(cardinality(pg_temp.s('limit3', 'limits', 'budget', 'anyone', NULL, NULL, 3)), 3, 'limit 3 returns 3 hits');

-- ------------------------------------------------------------------ ranking and reasons
SELECT is(pg_temp.s('rank', 'q', 'kiwi mango papaya'), ARRAY['q-rank3', 'q-rank2', 'q-rank1'],
          'ranking: more alternatives matched ranks higher (even when older)');
SELECT ok((SELECT (x[1]).score > (x[2]).score AND (x[2]).score > (x[3]).score FROM (SELECT (pg_temp.r('rank')).hits AS x) y),
          'ranking: scores strictly decrease with fewer matched alternatives');
SELECT is((SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(((pg_temp.r('rank')).hits[1]).reasons) k),
          ARRAY['actor', 'conversation', 'coverage', 'feedback', 'matched_terms', 'named_speaker', 'participation', 'period',
                'recency', 'session', 'tells_time', 'text', 'total', 'window_coverage'],
          'reasons has exactly text, coverage, actor, conversation, participation, recency, named_speaker, session, period, tells_time, window_coverage, feedback, total, matched_terms');
SELECT ok((SELECT bool_and((h.reasons->>'total')::float8 = h.score) FROM unnest((pg_temp.r('rank')).hits) h),
          'reasons.total equals the hit''s score');
SELECT ok((SELECT bool_and(abs((h.reasons->>'text')::float8 + (h.reasons->>'coverage')::float8 + (h.reasons->>'actor')::float8
                               + (h.reasons->>'conversation')::float8 + (h.reasons->>'participation')::float8
                               + (h.reasons->>'recency')::float8 + (h.reasons->>'named_speaker')::float8
                               + (h.reasons->>'session')::float8 + (h.reasons->>'period')::float8
                               + (h.reasons->>'tells_time')::float8 + (h.reasons->>'window_coverage')::float8
                               + (h.reasons->>'feedback')::float8 - h.score) < 1e-9)
             FROM unnest((pg_temp.r('rank')).hits) h),
          'the score is the sum of the components');
SELECT ok((((pg_temp.r('rank')).hits[1]).reasons->>'text')::float8 = (SELECT text_weight FROM history.search_settings)
          AND (((pg_temp.r('rank')).hits[2]).reasons->>'text')::float8 < (SELECT text_weight FROM history.search_settings)
          AND (((pg_temp.r('rank')).hits[3]).reasons->>'text')::float8 > 0,
          'text is relative to the best match: text_weight for it, less (and more than 0) for the others');
SELECT is(((pg_temp.r('rank')).hits[1]).reasons->'matched_terms', '["kiwi", "mango", "papaya"]'::jsonb,
          'matched_terms of the best hit: all three');
SELECT is(((pg_temp.r('rank')).hits[3]).reasons->'matched_terms', '["kiwi"]'::jsonb, 'matched_terms of the weakest hit: one');
SELECT ok(((pg_temp.r('rank')).hits[1]).reasons->>'coverage' > ((pg_temp.r('rank')).hits[3]).reasons->>'coverage'
          AND (((pg_temp.r('rank')).hits[1]).reasons->>'coverage')::float8 > (((pg_temp.r('rank')).hits[3]).reasons->>'coverage')::float8,
          'coverage is larger for the message matching more alternatives');

-- (session_weight 0 too: tie-a and tie-b are each other's session, tie-old is alone)
UPDATE history.search_settings SET recency_weight = 0, session_weight = 0;
SELECT is(pg_temp.s('ties', 'q', 'tangerine'), ARRAY['tie-a', 'tie-b', 'tie-old'],
          'ties break by sent_at descending, then message id');
SELECT is((SELECT count(DISTINCT h.score)::int FROM unnest((pg_temp.r('ties')).hits) h), 1, 'the tied hits do have equal scores');
SELECT is(pg_temp.s('ties1', 'q', 'tangerine', 'anyone', NULL, NULL, 1), ARRAY['tie-a'],
          'the tie-break also decides which hits make the limit');
UPDATE history.search_settings SET recency_weight = 0.5, session_weight = DEFAULT;

-- ------------------------------------------------------------------ text comes from canonical events
SELECT lives_ok($$SELECT history.edit_message('q-banana', 'banana bread', '2026-02-03 00:00+00')$$, 'edit a message');
SELECT is((SELECT h.body FROM unnest((history._search_history(pg_temp.tok('q'), 'bread')).hits) h WHERE h.message_id = 'q-banana'),
          'banana bread', 'a hit carries its current (edited) text');
-- White-box: a projection document that disagrees with the canonical text.
UPDATE history.message_search_documents SET document = to_tsvector('english', 'zanzibar') WHERE message_id = 'q-carrot';
SELECT is((SELECT h.body FROM unnest((history._search_history(pg_temp.tok('q'), 'zanzibar')).hits) h WHERE h.message_id = 'q-carrot'),
          'carrot soup', 'returned text is loaded from canonical events, never from the projection');

-- ------------------------------------------------------------------ audit, digest, trace, evidence
SELECT is(pg_temp.s('xylo', 'audit', 'Xylophonist   quokka'), ARRAY['q-xylo'], 'audit world: one hit');
SELECT is((SELECT count(*)::int FROM history.conversation_search_events e WHERE e.search_event_id = (pg_temp.r('xylo')).search_event_id), 1,
          'the result names its audit row');
SELECT ok(position('xylophon' IN lower(row_to_json(pg_temp.ev('xylo'))::text)) = 0
          AND position('quokka' IN lower(row_to_json(pg_temp.ev('xylo'))::text)) = 0,
          'the audit row holds no query word (nor the hit''s text)');
SELECT ok((SELECT bool_and(position('xylophon' IN lower(row_to_json(t)::text)) = 0) FROM history.run_trace t
            JOIN history.runs r USING (run_key) WHERE r.run_token = pg_temp.tok('audit')),
          'the run trace holds no query word');
SELECT ok(position('xylophon' IN lower((SELECT row_to_json(a)::text FROM history.search_audit a
                                          WHERE a.search_event_id = (pg_temp.r('xylo')).search_event_id))) = 0,
          'the search_audit view row holds no query word');
SELECT ok(NOT ((pg_temp.ev('xylo')).hit_rankings::text LIKE '%matched%'), 'hit_rankings carries no matched terms');
SELECT is(history.verify_query_digest((pg_temp.r('xylo')).search_event_id, 'Xylophonist   quokka'), true,
          'verify_query_digest: true for the same query');
SELECT is(history.verify_query_digest((pg_temp.r('xylo')).search_event_id, E'  xylophonist\tQUOKKA '), true,
          'verify_query_digest: true for the same query in another case and white space');
SELECT is(history.verify_query_digest((pg_temp.r('xylo')).search_event_id, 'xylophonist'), false,
          'verify_query_digest: false for another query');
SELECT is(history.verify_query_digest((pg_temp.r('xylo')).search_event_id, 'quokka xylophonist'), false,
          'verify_query_digest: false for the same words in another order');
SELECT throws_ok($$SELECT history.verify_query_digest(gen_random_uuid(), 'x')$$, 'HS003', NULL, 'verify_query_digest: unknown event is HS003');
SELECT throws_ok($$SELECT history.verify_query_digest((pg_temp.r('xylo')).search_event_id, NULL)$$, 'HS001', NULL,
                 'verify_query_digest: null query is HS001');
SELECT is((SELECT count(*)::int FROM history.run_trace t JOIN history.runs r USING (run_key)
            WHERE r.run_token = pg_temp.tok('audit') AND t.entry_kind = 'search_audit'
              AND t.event_key = (pg_temp.ev('xylo')).event_key
              AND t.detail->>'search_event_id' = (pg_temp.r('xylo')).search_event_id::text), 1,
          'run_trace has a search_audit entry pointing at the event');
SELECT is(pg_temp.srt(ARRAY(SELECT m.message_id COLLATE "default" FROM history.run_evidence ev
                               JOIN history.messages m USING (message_key)
                              WHERE ev.event_key = (pg_temp.ev('xylo')).event_key)),
          pg_temp.srt(ARRAY['q-xylo'] || pg_temp.ids(((pg_temp.r('xylo')).hits[1]).before) || pg_temp.ids(((pg_temp.r('xylo')).hits[1]).after)),
          'run_evidence: one row per returned message, hits and neighbours');
SELECT is(cardinality(pg_temp.ids(((pg_temp.r('xylo')).hits[1]).before)) + cardinality(pg_temp.ids(((pg_temp.r('xylo')).hits[1]).after)), 4,
          'the audit hit came with two neighbours on each side');
SELECT is(pg_temp.srt((pg_temp.ev('xylo')).selected_message_ids),
          pg_temp.srt(ARRAY['q-xylo'] || pg_temp.ids(((pg_temp.r('xylo')).hits[1]).before) || pg_temp.ids(((pg_temp.r('xylo')).hits[1]).after)),
          'the audit row''s selected ids are the hits and neighbours');
SELECT is(ARRAY[(pg_temp.r('xylo')).budget_used, (pg_temp.r('xylo')).budget_remaining], ARRAY[5, 395],
          'budget after the first search: 5 used, 395 left');
SELECT is(pg_temp.s('xylo2', 'audit', 'quokka'), ARRAY['q-xylo'], 're-search of held messages');
SELECT is(ARRAY[(pg_temp.r('xylo2')).budget_used, (pg_temp.r('xylo2')).budget_remaining], ARRAY[5, 395],
          'a re-search returning only held messages costs nothing');
SELECT is((SELECT count(*)::int FROM history.run_evidence ev JOIN history.runs r USING (run_key) WHERE r.run_token = pg_temp.tok('audit')), 5,
          'evidence stays distinct');

-- ------------------------------------------------------------------ budget
-- Windows of 20 minutes walking back through the 450 matches: each search
-- returns up to 20 hits with neighbours; some neighbours are already held.
CREATE TEMP TABLE budget_steps (j integer PRIMARY KEY, status text, used integer, remaining integer,
                                hits integer, selected integer, excluded_budget integer) ON COMMIT DROP;
DO $budget$
DECLARE
    j integer := 0;
    v history.search_result;
BEGIN
    LOOP
        v := history._search_history(pg_temp.tok('big'), 'budget', 'anyone', NULL,
                                    timestamptz '2026-03-01 00:00+00' + (450 - 20 * j) * interval '1 minute', 20);
        INSERT INTO pg_temp.budget_steps
        SELECT j, v.status, v.budget_used, v.budget_remaining, cardinality(v.hits),
               cardinality(e.selected_message_ids), e.excluded_budget
          FROM history.conversation_search_events e WHERE e.search_event_id = v.search_event_id;
        EXIT WHEN v.status = 'search_budget_exhausted' OR j >= 30;
        IF j = 0 THEN
            -- The same search again: everything is held, nothing is charged.
            v := history._search_history(pg_temp.tok('big'), 'budget', 'anyone', NULL,
                                        timestamptz '2026-03-01 00:00+00' + 450 * interval '1 minute', 20);
            INSERT INTO pg_temp.budget_steps VALUES (-1, v.status, v.budget_used, v.budget_remaining, cardinality(v.hits), NULL, NULL);
        END IF;
        j := j + 1;
    END LOOP;
END
$budget$;

SELECT is((SELECT used FROM budget_steps WHERE j = -1), (SELECT used FROM budget_steps WHERE j = 0),
          'budget: repeating a search of held messages costs nothing');
SELECT is((SELECT hits FROM budget_steps WHERE j = -1), 20, 'budget: ... and still returns the held hits');
SELECT is((SELECT status FROM budget_steps WHERE j = (SELECT max(j) FROM budget_steps)), 'search_budget_exhausted',
          'budget: repeated searches end exhausted');
SELECT is((SELECT ARRAY[used, remaining] FROM budget_steps WHERE j = (SELECT max(j) FROM budget_steps)), ARRAY[400, 0],
          'budget: ends at exactly 400 used, 0 remaining');
SELECT is((SELECT count(*)::int FROM budget_steps WHERE j >= 0 AND j < (SELECT max(j) FROM budget_steps) AND status <> 'ok'), 0,
          'budget: every earlier search was ok');
SELECT ok((SELECT bool_and(used + remaining = 400 AND used <= 400) FROM budget_steps), 'budget: used + remaining = 400 at every step');
SELECT ok((SELECT bool_and(s.used > p.used) FROM budget_steps s JOIN budget_steps p ON p.j = s.j - 1 WHERE s.j > 0),
          'budget: each walking step brought new evidence');
SELECT is((SELECT count(*)::int FROM history.run_evidence ev JOIN history.runs r USING (run_key) WHERE r.run_token = pg_temp.tok('big')), 400,
          'budget: the run holds exactly 400 distinct evidence messages');
SELECT is((SELECT evidence_count FROM history.runs WHERE run_token = pg_temp.tok('big')), 400, 'budget: the run''s evidence_count is 400');

SELECT is(cardinality(pg_temp.s('held', 'big', 'budget', 'anyone', '2026-03-01 05:30+00', '2026-03-01 05:50+00')), 20,
          'budget exhausted: a search of held messages still returns them');
SELECT is(ARRAY[(pg_temp.r('held')).budget_used, (pg_temp.r('held')).budget_remaining], ARRAY[400, 0],
          'budget exhausted: ... and costs nothing');
SELECT is((pg_temp.r('held')).status, 'search_budget_exhausted', 'budget exhausted: the status says so (0 remaining)');
SELECT is(pg_temp.s('withheld', 'big', 'budget', 'anyone', NULL, '2026-03-01 00:30+00'), '{}'::text[],
          'budget exhausted: new matches are withheld');
SELECT is((pg_temp.ev('withheld')).excluded_budget, 20, 'budget exhausted: the audit counts the withheld hits under budget');
SELECT is((pg_temp.ev('withheld')).budget_used, 400, 'budget exhausted: the audit row records 400 used');

-- Partial admission of neighbours, in the order before1, after1, before2, after2.
-- White-box: the run is made to hold 397 (its evidence_count, which the budget
-- reads), so one hit with four new neighbours has room for three messages.
UPDATE history.runs SET evidence_count = 397 WHERE run_token = pg_temp.tok('partial');
SELECT is(pg_temp.s('partial', 'partial', 'budget', 'anyone', '2026-03-01 03:20+00', '2026-03-01 03:21+00', 1), ARRAY['big-200'],
          'partial admission: the hit is admitted');
SELECT is(pg_temp.ids(((pg_temp.r('partial')).hits[1]).before), ARRAY['big-199'], 'partial admission: before1 admitted, before2 not');
SELECT is(pg_temp.ids(((pg_temp.r('partial')).hits[1]).after), ARRAY['big-201'], 'partial admission: after1 admitted before before2');
SELECT is(ARRAY[(pg_temp.r('partial')).budget_used, (pg_temp.r('partial')).budget_remaining], ARRAY[400, 0],
          'partial admission: exactly 400');
SELECT is((pg_temp.r('partial')).status, 'search_budget_exhausted', 'partial admission: status exhausted');
SELECT is((pg_temp.ev('partial')).selected_message_ids, ARRAY['big-200', 'big-199', 'big-201'],
          'partial admission: the audit row lists exactly the admitted messages in admission order');

SELECT * FROM finish();
ROLLBACK;
