-- The search's stages called alone: admission under the budget
-- (history._admit_hits, a pure function), neighbours (history._hit_neighbours),
-- the passes, the run's scope (_run_scope), the result (_search_hits) and the
-- audit (_record_search).
BEGIN;
SELECT plan(36);

-- ------------------------------------------------------------ _admit_hits
-- Hits 1, 2, 3 with neighbours; budget and prior evidence as given.
CREATE FUNCTION pg_temp.nb(p_before bigint[], p_after bigint[]) RETURNS history._hit_neighbours
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE n history._hit_neighbours;
BEGIN
    n.before := p_before;
    n.after := p_after;
    RETURN n;
END $$;
CREATE TEMP TABLE adm ON COMMIT DROP AS
SELECT history._admit_hits(ARRAY[1, 2, 3]::bigint[],
                           ARRAY[pg_temp.nb('{11,12}', '{13}'), pg_temp.nb('{}', '{21}'), pg_temp.nb('{31}', '{}')],
                           ARRAY[1, 2, 3, 11, 12, 13, 21, 31]::bigint[], '{}', 400) AS everything,
       history._admit_hits(ARRAY[1, 2, 3]::bigint[],
                           ARRAY[pg_temp.nb('{11,12}', '{13}'), pg_temp.nb('{}', '{21}'), pg_temp.nb('{31}', '{}')],
                           ARRAY[1, 2, 3, 11, 13, 21, 31]::bigint[], ARRAY[13]::bigint[], 2) AS tight,
       history._admit_hits(ARRAY[1, 2]::bigint[], ARRAY[pg_temp.nb('{}', '{}'), pg_temp.nb('{}', '{}')],
                           ARRAY[2]::bigint[], '{}', 0) AS dead_and_none_left;

SELECT is((SELECT (everything).selected FROM adm), ARRAY[1, 11, 13, 12, 2, 21, 3, 31]::bigint[],
          'admission: each hit, then its neighbours before1, after1, before2, after2');
SELECT is((SELECT (everything).remaining FROM adm), 392, 'admission: eight new messages cost eight');
SELECT is((SELECT array_agg(ROW(h.rank, h.message_key, h.before, h.after)::text ORDER BY h.rank)
             FROM adm, unnest((adm.everything).hits) h),
          ARRAY['(1,1,"{11,12}",{13})', '(2,2,{},{21})', '(3,3,{31},{})'], 'admission: each hit with its admitted neighbours');
SELECT is((SELECT ARRAY[(tight).remaining, (tight).budget_out, cardinality((tight).new_keys)] FROM adm), ARRAY[0, 2, 2],
          'a budget of two: hit 1, its neighbour 11 and the held 13 (free); 12 deleted; hits 2 and 3 withheld');
SELECT is((SELECT (tight).selected FROM adm), ARRAY[1, 11, 13]::bigint[], 'a message the run holds is shown at no cost');
SELECT is((SELECT ARRAY[(dead_and_none_left).dead, (dead_and_none_left).budget_out] FROM adm), ARRAY[1, 1],
          'a deleted hit counts as dead, not against the budget; with none left a live one is withheld');
SELECT is((SELECT (dead_and_none_left).withheld FROM adm), true, 'withheld says something was left out for the budget');

-- --------------------------------------------------------- _hit_neighbours
-- One conversation, six messages an hour apart; the fourth is loaded.
DO $world$
DECLARE k integer;
BEGIN
    PERFORM history.upsert_account('st-bot', 'agent');
    PERFORM history.upsert_conversation('st-c', 'group');
    PERFORM history.add_member('st-c', 'st-bot', '2026-01-01 00:00+00');
    FOR k IN 1 .. 6 LOOP
        PERFORM history.post_message('st-' || k, 'st-c', 'st-bot', 'note ' || k,
                                     timestamptz '2026-01-02 00:00+00' + k * interval '1 hour');
    END LOOP;
END
$world$;
CREATE FUNCTION pg_temp.neighbours(p_hit text, p_visible tstzmultirange, p_context text[])
RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
    h history._ranked_candidate;
    n history._hit_neighbours[];
BEGIN
    SELECT d.message_key, d.message_id, d.conversation_key, d.sent_at
      INTO h.message_key, h.message_id, h.conversation_key, h.sent_at
      FROM history.message_search_documents d WHERE d.message_id = p_hit;
    h.visible := p_visible;
    n := history._hit_neighbours(1, ARRAY[h], '{}', '{}', '{}',
                                 ARRAY(SELECT message_key FROM history.messages WHERE message_id = ANY (p_context)));
    RETURN ARRAY(SELECT m.message_id FROM unnest(n[1].before) WITH ORDINALITY b(k, o)
                   JOIN history.messages m ON m.message_key = b.k ORDER BY b.o)
           || '{|}'::text[]
           || ARRAY(SELECT m.message_id FROM unnest(n[1].after) WITH ORDINALITY a(k, o)
                      JOIN history.messages m ON m.message_key = a.k ORDER BY a.o);
END $$;

SELECT is(pg_temp.neighbours('st-3', '{[2026-01-01,)}', '{}'), ARRAY['st-2', 'st-1', '|', 'st-4', 'st-5'],
          'neighbours: two each side, nearest first');
SELECT is(pg_temp.neighbours('st-3', '{[2026-01-01,)}', '{st-4}'), ARRAY['st-2', 'st-1', '|', 'st-5', 'st-6'],
          'neighbours: a message in the run''s context is skipped');
SELECT is(pg_temp.neighbours('st-3', '{[2026-01-02 01:30+00,2026-01-02 04:30+00)}', '{}'), ARRAY['st-2', '|', 'st-4'],
          'neighbours: only inside the hit''s windows');

-- ---------------------------------------------------------- _ranking_pass
-- The same conversation, searched for "note" with no audience: st-4 is in
-- the run's context.
CREATE FUNCTION pg_temp.ranking(p_context text[], p_cap integer, p_refill boolean)
RETURNS history._ranking_pass LANGUAGE plpgsql AS $$
DECLARE
    v_scope    history._search_scope;
    v_settings history.search_settings;
    v_bot      bigint := (SELECT account_key FROM history.accounts WHERE account_id = 'st-bot');
BEGIN
    SELECT * INTO v_settings FROM history.search_settings;
    v_settings.max_candidates := p_cap;
    v_scope.tenant_key := 1;  -- the built-in tenant
    v_scope.agent_key := v_bot;
    v_scope.conversation_key := (SELECT conversation_key FROM history.conversations WHERE conversation_id = 'st-c');
    v_scope.requester_accounts := '{}';
    v_scope.audience := '{}';
    v_scope.context := ARRAY(SELECT message_key FROM history.messages WHERE message_id = ANY (p_context));
    v_scope.agent_conversations := ARRAY[v_scope.conversation_key];
    v_scope.audience_conversations := '{}';
    v_scope.audience_windows := '{}';
    v_scope.eligible_conversations := '{}';
    v_scope.eligible_windows := '{}';
    RETURN history._ranking_pass(v_scope, a.query, a.terms, '{}', '{}', NULL, NULL, NULL, v_settings, 20,
                                 NULL, NULL, p_refill)
      FROM history._query_analysis('note', ARRAY['english'::regconfig], 32) a;
END $$;
CREATE FUNCTION pg_temp.ids(p history._ranking_pass) RETURNS text[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(r.message_id ORDER BY r.message_id), '{}') FROM unnest(p.ranked) r $$;

SELECT is(pg_temp.ids(pg_temp.ranking('{st-4}', 2000, false)), ARRAY['st-1', 'st-2', 'st-3', 'st-5', 'st-6'],
          'ranking pass: every match but the one in context');
SELECT is((SELECT ARRAY[p.excluded_lineage, p.excluded_in_context] FROM pg_temp.ranking('{st-4}', 2000, false) p), ARRAY[0, 1],
          'ranking pass: the context removal is counted');
SELECT is((SELECT (r).matched_terms FROM unnest((pg_temp.ranking('{}', 2000, false)).ranked) r LIMIT 1), ARRAY['note'],
          'ranking pass: each candidate carries its matched terms, by name');
SELECT is((SELECT p.neighbours FROM pg_temp.ranking('{st-4}', 2000, false) p),
          (SELECT history._hit_neighbours(1, p.ranked, '{}', '{}', '{}',
                                          ARRAY(SELECT message_key FROM history.messages WHERE message_id = 'st-4'))
             FROM pg_temp.ranking('{st-4}', 2000, false) p),
          'ranking pass: each ranked match''s neighbours, as _hit_neighbours walks them (the window stage''s walk, shown with the hits)');
UPDATE history.search_settings SET window_coverage_weight = 0, feedback_weight = 0;
SELECT is((SELECT p.neighbours FROM pg_temp.ranking('{st-4}', 2000, false) p), NULL,
          'ranking pass: without the window stage nothing is walked (the search walks its hits)');
UPDATE history.search_settings SET window_coverage_weight = DEFAULT, feedback_weight = DEFAULT;
SELECT is(pg_temp.ids(pg_temp.ranking('{st-6}', 2, false)), ARRAY['st-5'],
          'at cap two, a first read removes st-6 (in context) and ranks one');
SELECT is(pg_temp.ids(pg_temp.ranking('{st-6}', 2, true)), ARRAY['st-4', 'st-5'],
          'at cap two, the read with every rule inside the scan ranks two');

-- --------------------------------------------------------- _counting_pass
CREATE FUNCTION pg_temp.counting(p_after timestamptz, p_before timestamptz, p_max integer)
RETURNS history._counting_pass LANGUAGE plpgsql AS $$
DECLARE
    v_scope history._search_scope;
BEGIN
    v_scope.tenant_key := 1;  -- the built-in tenant
    v_scope.agent_key := (SELECT account_key FROM history.accounts WHERE account_id = 'st-bot');
    v_scope.conversation_key := (SELECT conversation_key FROM history.conversations WHERE conversation_id = 'st-c');
    v_scope.requester_accounts := '{}';
    v_scope.audience := '{}';
    v_scope.context := '{}';
    v_scope.agent_conversations := ARRAY[v_scope.conversation_key];
    v_scope.audience_conversations := '{}';
    v_scope.audience_windows := '{}';
    RETURN history._counting_pass(v_scope, a.query, 'anyone', p_after, p_before, p_max)
      FROM history._query_analysis('note', ARRAY['english'::regconfig], 32) a;
END $$;
SELECT is((SELECT ARRAY[c.excluded_speaker, c.excluded_time, c.excluded_perspective, c.excluded_audience]
             FROM pg_temp.counting('2026-01-02 04:30+00', NULL, 500) c), ARRAY[0, 4, 0, 0],
          'counting pass: the four matches before p_after counted under time');
SELECT is((SELECT c.capped FROM pg_temp.counting(NULL, NULL, 500) c), false, 'counting pass: six matches, cap 500: not capped');
SELECT is((SELECT ARRAY[c.excluded_time::text, c.capped::text] FROM pg_temp.counting(NULL, '2026-01-02 05:30+00', 3) c),
          ARRAY['1', 'true'], 'counting pass at cap three: the newest three counted (st-6 after p_before), capped');

-- ------------------------------------------------- _run_scope, _search_hits, _record_search
-- A run in st-c: st-ann asks; st-4 is its current message.
DO $world$
BEGIN
    PERFORM history.upsert_account('st-ann', 'person', 'Ann');
    PERFORM history.add_member('st-c', 'st-ann', '2026-01-01 00:00+00');
    CREATE TEMP TABLE st_token ON COMMIT DROP AS SELECT history.begin_run('st-bot', 'st-c', 'st-ann', 'st-4') AS token;
END
$world$;
-- The run's row as it is now.
CREATE FUNCTION pg_temp.st_run() RETURNS history.runs LANGUAGE sql AS
$$ SELECT r FROM history.runs r WHERE r.run_token = (SELECT token FROM st_token) $$;
CREATE FUNCTION pg_temp.key(p_id text) RETURNS bigint LANGUAGE sql AS
$$ SELECT m.message_key FROM history.messages m WHERE m.message_id = p_id AND m.tenant_key = 1 $$;
CREATE TEMP TABLE st_scope ON COMMIT DROP AS SELECT s.* FROM history._run_scope(pg_temp.st_run()) s;
SELECT is((SELECT ARRAY[cardinality(context), cardinality(agent_conversations), cardinality(eligible_conversations)]
             FROM st_scope), ARRAY[1, 1, 1], 'run scope: the current message is the context; one conversation, eligible');
SELECT is((SELECT context[1] FROM st_scope), pg_temp.key('st-4'), 'run scope: context is the run''s current message');
SELECT is((SELECT audience FROM st_scope),
          (SELECT array_agg(a.account_key) FROM history.accounts a WHERE a.account_id = 'st-ann'),
          'run scope: the default audience is the destination''s open members but the agent');

-- Hit st-2 with neighbours st-1 (before) and st-3 (after), admitted on a fresh budget.
CREATE FUNCTION pg_temp.st_ranked() RETURNS history._ranked_candidate[] LANGUAGE plpgsql AS $$
DECLARE c history._ranked_candidate;
BEGIN
    c.message_key := pg_temp.key('st-2');
    c.message_id := 'st-2';
    c.total := 1.5;
    c.text_score := 1.0;
    c.matched_terms := ARRAY['note'];
    RETURN ARRAY[c];
END $$;
CREATE TEMP TABLE st_adm ON COMMIT DROP AS
SELECT history._admit_hits(ARRAY[pg_temp.key('st-2')], ARRAY[pg_temp.nb(ARRAY[pg_temp.key('st-1')], ARRAY[pg_temp.key('st-3')])],
                           ARRAY[pg_temp.key('st-1'), pg_temp.key('st-2'), pg_temp.key('st-3')], '{}', 400) AS a;
SELECT is((SELECT array_agg(ROW(h.message_id, h.body, h.score, h.reasons->'matched_terms', h.before->0->>'body',
                                h.after->0->>'body')::text)
             FROM st_adm, unnest(history._search_hits(1, st_adm.a, pg_temp.st_ranked(), ARRAY['note'], (pg_temp.st_run()).agent_key,
                                                                (SELECT requester_accounts FROM st_scope), 1000)) h),
          ARRAY['(st-2,"note 2",1.5,[1],"note 1","note 3")'],
          'result stage: the hit''s text from canonical events, its score, matched terms as positions, its neighbours');
SELECT is((SELECT (history._search_hits(1, st_adm.a, pg_temp.st_ranked(), ARRAY['note'], (pg_temp.st_run()).agent_key,
                                        (SELECT requester_accounts FROM st_scope), 3))[1].body_truncated
             FROM st_adm), true, 'result stage: a body over the byte limit is cut and says so');

CREATE TEMP TABLE st_rec ON COMMIT DROP AS
SELECT rec.*
  FROM st_adm, history._record_search(pg_temp.st_run(), 'Secret Words', 'anyone', NULL, NULL, 8, 1, NULL, NULL,
                                      pg_temp.st_ranked(), st_adm.a, false, (pg_temp.st_run()).audience_keys) rec;
SELECT is((SELECT ARRAY[status, budget_used::text, budget_remaining::text] FROM st_rec), ARRAY['ok', '3', '397'],
          'audit stage: status and the run''s budget after three new messages');
SELECT is((SELECT ARRAY[e.hit_message_ids::text, e.selected_message_ids::text] FROM history.conversation_search_events e, st_rec
            WHERE e.search_event_id = st_rec.search_event_id),
          ARRAY['{st-2}', '{st-2,st-1,st-3}'], 'audit stage: the event lists the hit and every message shown');
SELECT is((SELECT count(*)::int FROM history.run_evidence ev WHERE ev.run_key = (pg_temp.st_run()).run_key), 3,
          'audit stage: each shown message is the run''s evidence');
SELECT is((SELECT ARRAY[evidence_count, search_count] FROM history.runs r WHERE r.run_key = (pg_temp.st_run()).run_key),
          ARRAY[3, 1], 'audit stage: the run''s count and searches');
SELECT ok((SELECT e.query_digest = history._hmac_sha256(convert_to(history._normalise_query('Secret Words'), 'UTF8'), k.secret)
             FROM history.conversation_search_events e JOIN history.query_digest_keys k USING (digest_key_id), st_rec
            WHERE e.search_event_id = st_rec.search_event_id)
          AND NOT EXISTS (SELECT FROM history.conversation_search_events e, st_rec
                           WHERE e.search_event_id = st_rec.search_event_id AND e::text ILIKE '%secret%'),
          'audit stage: the query is kept as its keyed digest, its text nowhere');

-- ------------------------------------------------- _check_search_arguments, _query_names
SELECT is(ARRAY[history._check_search_arguments('q', NULL, NULL, NULL, NULL, 10),
                history._check_search_arguments('q', 'you', NULL, NULL, 50, 10),
                history._check_search_arguments('', 'requester', '2026-01-01', '2026-01-01', 3, 10)],
          ARRAY[8, 20, 3], 'arguments: the limit defaults to 8 and is capped at 20');
SELECT throws_ok($$SELECT history._check_search_arguments(repeat('é', 11), 'anyone', NULL, NULL, 8, 10)$$, 'HS001',
                 'p_query is 11 characters long, over the maximum of 10', 'arguments: the query cap counts characters');
SELECT throws_ok($$SELECT history._check_search_arguments('q', 'nobody', NULL, NULL, 8, 10)$$, 'HS001',
                 'invalid speaker ''nobody''', 'arguments: a bad speaker is named');
SELECT throws_ok($$SELECT history._check_search_arguments('q', 'anyone', '2026-02-01', '2026-01-01', 8, 10)$$, 'HS001',
                 NULL, 'arguments: after later than before');
SELECT throws_ok($$SELECT history._check_search_arguments(NULL, 'anyone', NULL, NULL, 0, 10)$$, 'HS001',
                 'p_query must be text, got NULL', 'arguments: the query is checked first');
SELECT is((SELECT ROW(n.name_terms, n.named_authors)::text
             FROM history._query_names(1, ARRAY['ann', 'note', 'bot'],
                                       ARRAY(SELECT a.account_key FROM history.accounts a WHERE a.account_id IN ('st-ann', 'st-bot')),
                                       ARRAY['english']::regconfig[]) n),
          ROW(ARRAY['ann'], ARRAY(SELECT a.account_key FROM history.accounts a WHERE a.account_id = 'st-ann'))::text,
          'named people: the query term that is a person''s name, and that person');

SELECT * FROM finish();
ROLLBACK;
