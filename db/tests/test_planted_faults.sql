-- Cases written for faults planted in the SQL that the rest of the suite
-- missed (issue 13, item 6; docs/testing.md, "Planted faults"). Each block
-- names the fault it catches.
BEGIN;
SELECT plan(47);

-- ------------------------------------------------------------------ the world
--   pf-g    group    pf-bot, pf-p1, pf-p2 since 01-01; pf-p3 never
--   pf-o1..pf-o3     groups of pf-p3 (so pf-p3 has the most memberships of
--                    the audience and is not one of the accounts with the
--                    fewest, which _audience_windows starts from)
--   pf-team group    pf-bot, pf-alice, pf-alice2, pf-bob; pf-alice2 is linked
--                    to pf-alice by pf-proof
--   pf-ch   channel  pf-bob since 01-01, pf-bot from 02-01
SELECT history.upsert_account(a, k) FROM (VALUES ('pf-bot', 'agent'), ('pf-p1', 'person'), ('pf-p2', 'person'),
        ('pf-p3', 'person'), ('pf-alice', 'person'), ('pf-alice2', 'person'), ('pf-bob', 'person')) v(a, k);
SELECT history.upsert_conversation(c, k) FROM (VALUES ('pf-g', 'group'), ('pf-o1', 'group'), ('pf-o2', 'group'),
        ('pf-o3', 'group'), ('pf-team', 'group'), ('pf-ch', 'channel')) v(c, k);
SELECT history.add_member(c, a, s::timestamptz) FROM (VALUES
        ('pf-g', 'pf-bot', '2026-01-01'), ('pf-g', 'pf-p1', '2026-01-01'), ('pf-g', 'pf-p2', '2026-01-01'),
        ('pf-o1', 'pf-p3', '2026-01-01'), ('pf-o2', 'pf-p3', '2026-01-01'), ('pf-o3', 'pf-p3', '2026-01-01'),
        ('pf-team', 'pf-bot', '2026-01-01'), ('pf-team', 'pf-alice', '2026-01-01'),
        ('pf-team', 'pf-alice2', '2026-01-01'), ('pf-team', 'pf-bob', '2026-01-01'),
        ('pf-ch', 'pf-bob', '2026-01-01'), ('pf-ch', 'pf-bot', '2026-02-01')) v(c, a, s);
SELECT history.link_identity('pf-proof', 'pf-alice', 'pf-alice2', '2026-01-05');
SELECT history.post_message(m, c, a, b, s::timestamptz) FROM (VALUES
        ('pf-m1', 'pf-g', 'pf-p1', 'pfaudience marker', '2026-02-01'),
        ('pf-now', 'pf-g', 'pf-p1', 'and so?', '2026-02-10'),
        ('pf-a1', 'pf-team', 'pf-alice2', 'pfquote is forty', '2026-02-01'),
        ('pf-ask', 'pf-team', 'pf-alice', 'what was it?', '2026-02-10'),
        ('pf-d1', 'pf-ch', 'pf-bob', 'before the bot came', '2026-01-15'),
        ('pf-d2', 'pf-ch', 'pf-bob', 'still before the bot', '2026-01-20'),
        ('pf-d3', 'pf-ch', 'pf-bob', 'pfneighbour here', '2026-02-02'),
        ('pf-d4', 'pf-ch', 'pf-bob', 'after it', '2026-02-03'),
        ('pf-dnow', 'pf-ch', 'pf-bob', 'and?', '2026-02-10')) v(m, c, a, b, s);

CREATE TEMP TABLE pf_runs (name text PRIMARY KEY, run uuid) ON COMMIT DROP;
INSERT INTO pf_runs VALUES
    ('three', history.begin_run('pf-bot', 'pf-g', 'pf-p1', 'pf-now', '{}', ARRAY['pf-p1', 'pf-p2', 'pf-p3'])),
    ('two',   history.begin_run('pf-bot', 'pf-g', 'pf-p1', 'pf-now', '{}', ARRAY['pf-p1', 'pf-p2'])),
    ('outer', history.begin_run('pf-bot', 'pf-g', 'pf-p1', 'pf-now', '{}', ARRAY['pf-p1', 'pf-p3'])),
    ('req',   history.begin_run('pf-bot', 'pf-team', 'pf-alice', 'pf-ask', '{}', ARRAY['pf-alice'])),
    ('nb',    history.begin_run('pf-bot', 'pf-ch', 'pf-bob', 'pf-dnow', '{}', '{}'));
CREATE FUNCTION pg_temp.run(p_name text) RETURNS uuid LANGUAGE sql AS $$ SELECT run FROM pf_runs WHERE name = p_name $$;
CREATE TEMP TABLE pf_results (name text PRIMARY KEY, result history.search_result) ON COMMIT DROP;
INSERT INTO pf_results VALUES
    ('three', history._search_history(pg_temp.run('three'), 'pfaudience')),
    ('two',   history._search_history(pg_temp.run('two'), 'pfaudience')),
    ('outer', history._search_history(pg_temp.run('outer'), 'pfaudience')),
    ('req',   history._search_history(pg_temp.run('req'), 'pfquote', 'requester')),
    ('nb',    history._search_history(pg_temp.run('nb'), 'pfneighbour'));
CREATE FUNCTION pg_temp.hit_ids(p_name text) RETURNS text[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(h.message_id ORDER BY h.message_id), '{}')
      FROM pf_results r, unnest((r.result).hits) h WHERE r.name = p_name $$;
CREATE FUNCTION pg_temp.audit(p_name text) RETURNS history.search_audit LANGUAGE sql AS $$
    SELECT a.* FROM history.search_audit a JOIN pf_results r ON a.search_event_id = (r.result).search_event_id
     WHERE r.name = p_name $$;

-- ---------------------------------------------- (a) audience: every member, not some
-- Fault: _audience_windows keeps a conversation that some audience accounts
-- read (its readers > 0) instead of all of them. Shows only with three or
-- more accounts, one never in the conversation and not among the two with
-- the fewest memberships.
SELECT is(pg_temp.hit_ids('two'), ARRAY['pf-m1'],
          '(a) control: an audience of two members of pf-g may see pf-m1');
SELECT is(pg_temp.hit_ids('three'), '{}'::text[],
          '(a) an audience of three where pf-p3 was never in pf-g sees nothing of pf-g');
SELECT is((pg_temp.audit('three')).excluded_audience, 1, '(a) the audit counts pf-m1 under audience');
SELECT is((SELECT count(*)::int FROM history._audience_windows(
               1, (SELECT array_agg(account_key) FROM history.accounts WHERE account_id IN ('pf-p1', 'pf-p2', 'pf-p3')),
               NULL)),
          0, '(a) _audience_windows: no conversation is readable by all of pf-p1, pf-p2 and pf-p3');

-- ---------------------------------------------- (e) the audit's audience count
-- Fault: the audit row stores 0 audience exclusions whatever the search counted.
SELECT is(pg_temp.hit_ids('outer'), '{}'::text[], '(e) pf-p3 never read pf-g: no hit');
SELECT is((pg_temp.audit('outer')).excluded_audience, 1,
          '(e) excluded_audience is 1 in history.search_audit (pf-m1, removed by the audience rule)');
SELECT is((SELECT e.excluded_audience FROM history.conversation_search_events e
            WHERE e.search_event_id = (SELECT (result).search_event_id FROM pf_results WHERE name = 'outer')),
          1, '(e) and in the audit table itself');

-- ---------------------------------------------- (b) a requester hit's proof, revoked
-- Fault: _relied_proofs forgets the proofs that made a hit's author the
-- requester (speaker => 'requester'), so check_delivery misses their revocation.
SELECT is(pg_temp.hit_ids('req'), ARRAY['pf-a1'], '(b) speaker requester finds pf-alice2''s message (linked)');
SELECT is((SELECT h.speaker_role FROM pf_results r, unnest((r.result).hits) h WHERE r.name = 'req'), 'requester',
          '(b) its speaker role is requester');
SELECT is((SELECT ev.proof_keys FROM history.run_evidence ev JOIN history.messages m USING (message_key)
            WHERE m.message_id = 'pf-a1' AND ev.run_key = (SELECT run_key FROM history.runs WHERE run_token = pg_temp.run('req'))),
          ARRAY[(SELECT proof_key FROM history.identity_proofs WHERE proof_id = 'pf-proof')],
          '(b) the evidence records the proof the speaker match relied on');
SELECT history.revoke_proof('pf-proof', '2026-02-11');
SELECT results_eq($$SELECT message_id, reason FROM history.check_delivery(pg_temp.run('req'))$$,
                  $$VALUES ('pf-a1'::text, 'proof_revoked'::text)$$,
                  '(b) check_delivery reports the revoked proof the requester hit relied on');
SELECT throws_ok($$SELECT history.record_reply(pg_temp.run('req'), 'pf-reply', 'forty', '2026-02-12')$$,
                 'HS005', NULL, '(b) and record_reply refuses to deliver');

-- ---------------------------------------------- (d) before-neighbours inside the window
-- Fault: the before-neighbour scan drops its lower bound (the start of the
-- visible window) and returns messages from before the agent joined.
SELECT is((SELECT h.before FROM pf_results r, unnest((r.result).hits) h WHERE r.name = 'nb'), '[]'::jsonb,
          '(d) the hit just after the agent joined has no before-neighbours (pf-d1, pf-d2 came before it joined)');
SELECT is((SELECT array_agg(n->>'message_id') FROM pf_results r, unnest((r.result).hits) h,
                  jsonb_array_elements(h.after) n WHERE r.name = 'nb'),
          ARRAY['pf-d4'], '(d) control: its after-neighbour is there (pf-dnow is the current message)');

-- ---------------------------------------------- (h) an audience larger than the pivots' sample
-- _audience_windows picks its pivots among the first 16 audience accounts;
-- the windows must still require every account, the 20th too. Fault: the
-- qualifying test checks only the sampled accounts.
SELECT history.upsert_account('pf-w' || lpad(i::text, 2, '0'), 'person') FROM generate_series(1, 20) i;
SELECT history.upsert_conversation(c, 'channel') FROM (VALUES ('pf-w-all'), ('pf-w-most')) v(c);
SELECT history.add_member('pf-w-all', 'pf-w' || lpad(i::text, 2, '0'), '2026-01-01') FROM generate_series(1, 20) i;
-- pf-w20 (the last key) never reads pf-w-most, and has the fewest memberships
SELECT history.add_member('pf-w-most', 'pf-w' || lpad(i::text, 2, '0'), '2026-01-01') FROM generate_series(1, 19) i;
CREATE FUNCTION pg_temp.w_windows(p_last integer) RETURNS text[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(c.conversation_id ORDER BY c.conversation_id), '{}')
      FROM history._audience_windows(
               1, (SELECT array_agg(account_key) FROM history.accounts
                 WHERE account_id BETWEEN 'pf-w01' AND 'pf-w' || lpad(p_last::text, 2, '0')), NULL) w
      JOIN history.conversations c ON c.conversation_key = w.conversation_key $$;
SELECT is(pg_temp.w_windows(19), ARRAY['pf-w-all', 'pf-w-most'], '(h) control: 19 accounts read both channels');
SELECT is(pg_temp.w_windows(20), ARRAY['pf-w-all'],
          '(h) the 20th account, outside the pivots'' sample, never read pf-w-most: it is not a window');

-- ---------------------------------------------- (i) the instants a window starts and ends
-- A membership is [since, until): a match sent at the very instant the agent
-- left is outside it, one sent at the instant it came back inside. Fault:
-- _newest_matches tests the agent's membership with d.sent_at <= m.until, so
-- the match at the instant it left is returned and takes a cap slot.
--   pf-q    group    pf-bot 01-01 .. 03-01 12:00 and from 03-05; pf-p1 since 01-01
DO $q$
BEGIN
    PERFORM history.upsert_conversation('pf-q', 'group');
    PERFORM history.add_member('pf-q', 'pf-p1', '2026-01-01 00:00+00');
    PERFORM history.add_member('pf-q', 'pf-bot', '2026-01-01 00:00+00');
    PERFORM history.post_message(m, 'pf-q', 'pf-p1', 'pfplum', s::timestamptz) FROM (VALUES
        ('pf-q-in1', '2026-02-01 00:00+00'), ('pf-q-in2', '2026-02-10 00:00+00'),
        ('pf-q-left', '2026-03-01 12:00+00'),                  -- the instant the agent left
        ('pf-q-away', '2026-03-03 00:00+00'),
        ('pf-q-pre', '2026-03-04 23:59:59.999999+00'),         -- the last instant before it came back
        ('pf-q-back', '2026-03-05 00:00+00')) v(m, s);         -- the instant it came back
    PERFORM history.remove_member('pf-q', 'pf-bot', '2026-03-01 12:00+00');
    PERFORM history.add_member('pf-q', 'pf-bot', '2026-03-05 00:00+00');
END
$q$;
CREATE FUNCTION pg_temp.q_newest(p_listed boolean, p_count integer, p_strategy text) RETURNS text[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(n.message_id ORDER BY n.sent_at DESC, n.message_id DESC), '{}')
      FROM history._newest_matches(1, 'pfplum', (SELECT account_key FROM history.accounts WHERE account_id = 'pf-bot'),
                                   CASE WHEN p_listed THEN ARRAY(SELECT conversation_key FROM history.conversations
                                                                  WHERE conversation_id = 'pf-q') END,
                                   NULL, true, NULL, NULL, NULL, p_count, p_strategy) n $$;
SELECT is(pg_temp.q_newest(l, 2, s), ARRAY['pf-q-back', 'pf-q-in2'],
          '(i) _newest_matches in the agent''s windows, ' || coalesce(s, 'by estimate') || CASE WHEN l THEN ', listed' ELSE '' END
          || ': the match at the instant it came back is in, the one at the instant it left is out and takes no slot')
  FROM unnest(ARRAY['text', 'walk', 'probe', 'slice', 'slice:weeks', NULL]) s, unnest(ARRAY[true, false]) l
 WHERE l OR s IS DISTINCT FROM 'slice:weeks';
SELECT is(pg_temp.q_newest(true, 10, 'text'), ARRAY['pf-q-back', 'pf-q-in2', 'pf-q-in1'],
          '(i) all the matches in the agent''s windows: neither pf-q-left, pf-q-away nor pf-q-pre');

-- ---------------------------------------------- (j) delivery's perspective recheck at the window's ends
-- check_delivery counts a hit inside the agent's perspective when a
-- membership holds it in [since, until). Fault: the recheck counts the
-- instant the agent left (ms.until >= m.sent_at), so a hit the agent no
-- longer sees (it left at the very instant the hit was sent) is delivered.
--   pf-r    group    pf-p1 since 01-01; pf-bot from 02-01 00:00 (the instant pf-r-first was sent)
DO $r$
BEGIN
    PERFORM history.upsert_conversation('pf-r', 'group');
    PERFORM history.add_member('pf-r', 'pf-p1', '2026-01-01 00:00+00');
    PERFORM history.add_member('pf-r', 'pf-bot', '2026-02-01 00:00+00');
    PERFORM history.post_message(m, 'pf-r', 'pf-p1', b, s::timestamptz) FROM (VALUES
        ('pf-r-first', 'pfdamson at the join', '2026-02-01 00:00+00'),
        ('pf-r-last', 'pfdamson before leaving', '2026-02-05 00:00+00'),
        ('pf-r-now', 'and?', '2026-02-06 00:00+00')) v(m, b, s);
END
$r$;
INSERT INTO pf_runs VALUES ('r', history.begin_run('pf-bot', 'pf-r', 'pf-p1', 'pf-r-now', '{}', ARRAY['pf-p1']));
INSERT INTO pf_results VALUES ('r', history._search_history(pg_temp.run('r'), 'pfdamson'));
SELECT is(pg_temp.hit_ids('r'), ARRAY['pf-r-first', 'pf-r-last'],
          '(j) a message sent at the instant the agent joined is a hit');
SELECT is_empty($$SELECT * FROM history.check_delivery(pg_temp.run('r'))$$,
                '(j) and check_delivery passes it (the membership began at its sent_at)');
-- The agent leaves at the very instant pf-r-last was sent, after the search.
SELECT history.remove_member('pf-r', 'pf-bot', '2026-02-05 00:00+00');
SELECT results_eq($$SELECT message_id, reason FROM history.check_delivery(pg_temp.run('r'))$$,
                  $$VALUES ('pf-r-last'::text, 'perspective'::text)$$,
                  '(j) a hit sent at the instant the agent left is outside its perspective now: perspective');

-- ---------------------------------------------- (k) neighbours and the exclusion counts: context and lineage
-- Faults: the before-neighbours drop the in-context test (a loaded message
-- comes back as a neighbour); the after-neighbours drop the lineage test (a
-- message drawn from a DM the audience cannot read comes back); the candidate
-- rules are counted in_context before lineage (a match both in context and
-- drawn from that DM is counted in_context). Lineage comes first.
--   pf-k    channel  pf-bot, pf-alice, pf-bob since 01-01
--   pf-kdm  direct   pf-bot, pf-alice (pf-bob cannot read it)
DO $k$
BEGIN
    PERFORM history.upsert_conversation('pf-k', 'channel');
    PERFORM history.upsert_conversation('pf-kdm', 'direct');
    PERFORM history.add_member(c, a, '2026-01-01 00:00+00') FROM (VALUES ('pf-k', 'pf-bot'), ('pf-k', 'pf-alice'),
        ('pf-k', 'pf-bob'), ('pf-kdm', 'pf-bot'), ('pf-kdm', 'pf-alice')) v(c, a);
    PERFORM history.post_message('pf-k-dm', 'pf-kdm', 'pf-alice', 'a private thing', '2026-03-01 09:00+00');
    PERFORM history.post_message(m, 'pf-k', a, b, s::timestamptz, src) FROM (VALUES
        ('pf-k1', 'pf-bob', 'first filler', '2026-03-01 10:01+00', '{}'::text[]),
        ('pf-k2', 'pf-bob', 'second filler, loaded', '2026-03-01 10:02+00', '{}'),
        ('pf-k3', 'pf-alice', 'pfkumquat here', '2026-03-01 10:03+00', '{}'),
        ('pf-k4', 'pf-bot', 'drawn from the private thing', '2026-03-01 10:04+00', ARRAY['pf-k-dm']),
        ('pf-k5', 'pf-bob', 'fifth filler', '2026-03-01 10:05+00', '{}'),
        ('pf-k6', 'pf-bob', 'sixth filler', '2026-03-01 10:06+00', '{}'),
        ('pf-k7', 'pf-bot', 'pfkumquat drawn and loaded', '2026-03-01 10:07+00', ARRAY['pf-k-dm']),
        ('pf-k8', 'pf-bob', 'pfkumquat loaded', '2026-03-01 10:08+00', '{}'),
        ('pf-know', 'pf-alice', 'so?', '2026-03-01 10:10+00', '{}')) v(m, a, b, s, src);
END
$k$;
INSERT INTO pf_runs VALUES
    ('k', history.begin_run('pf-bot', 'pf-k', 'pf-alice', 'pf-know', ARRAY['pf-k2', 'pf-k7', 'pf-k8'], ARRAY['pf-alice', 'pf-bob']));
INSERT INTO pf_results VALUES ('k', history._search_history(pg_temp.run('k'), 'pfkumquat'));
SELECT is(pg_temp.hit_ids('k'), ARRAY['pf-k3'], '(k) one hit: pf-k7 is drawn from the DM and loaded, pf-k8 loaded');
SELECT is((SELECT array_agg(n->>'message_id') FROM pf_results r, unnest((r.result).hits) h,
                  jsonb_array_elements(h.before) n WHERE r.name = 'k'),
          ARRAY['pf-k1'], '(k) before-neighbours skip a loaded message (pf-k2): pf-k1 alone');
SELECT is((SELECT array_agg(n->>'message_id') FROM pf_results r, unnest((r.result).hits) h,
                  jsonb_array_elements(h.after) n WHERE r.name = 'k'),
          ARRAY['pf-k5', 'pf-k6'], '(k) after-neighbours skip a message drawn from a DM pf-bob cannot read (pf-k4)');
SELECT is(ARRAY[(pg_temp.audit('k')).excluded_lineage, (pg_temp.audit('k')).excluded_in_context], ARRAY[1, 1],
          '(k) pf-k7 (drawn from the DM and loaded) counts under lineage, pf-k8 under in_context');

-- ---------------------------------------------- (l) a one-character CJK query
-- A run of one CJK character is indexed as itself; a query of one is a term
-- too. Fault: the query side bigrams only runs of two or more, so 猫 yields
-- no term and finds nothing.
SELECT history.post_message('pf-cjk', 'pf-k', 'pf-bob', '猫 ok', '2026-03-01 10:09+00');
SELECT is(ARRAY(SELECT lexeme FROM history._query_lexemes('猫', ARRAY['english'::regconfig])), ARRAY['猫'],
          '(l) a one-character CJK query has that character as its term');
SELECT ok(history._document_vector('猫 ok', 'english') @@ '猫'::tsquery, '(l) the document indexes it');
INSERT INTO pf_results VALUES ('cjk', history._search_history(pg_temp.run('k'), '猫'));
SELECT is(pg_temp.hit_ids('cjk'), ARRAY['pf-cjk'], '(l) and a search for it finds the message');

-- ---------------------------------------------- (m) the document fast path
-- _document_vector takes a fast path for text that can only hold words; it
-- must give what the general path gives. The general path is forced here by
-- appending " <( >(" (boundary characters: no token, no position). Fault:
-- the fast path's character test loses ~, and ~drafts~ (chat strike-through)
-- is indexed as the parser reads it ('~drafts'), unfindable by "drafts".
SELECT is_empty($$
    SELECT b, c::text FROM unnest(ARRAY['~drafts~', 'the ~old~ new plan', 'plain words only', 'Hello, world!', 'it''s fine',
                               '*bold* and _under_', 'a~b', 'x ~y', 'see ~/bin', 'a<b c>d', 'a=b', 'a&b', 'a+b', 'a#b',
                               'a@b', 'a:b', 'a_b', E'a\\b', 'a/b', 'a.b', 'end.', 'a-b', '-dash', 'v1', '1v', '42 is 42',
                               'naïve café', '(parens) [brackets]', '%percent $dollar ^caret', 'quote''s "double"',
                               '#tag here', '@user here', '=x', '&amp; more', '+plus', '<b>bold</b>', '>quoted', '.hidden file',
                               '/root', ':colon', '_private', E'\\back', '-minus', '~tilde',
                               'see config.yaml', 'foo+bar', 'c++ rocks', 'a<=b', 'x>y then', 'path/to/file', 'user@example.com',
                               'key=value', 'this&that', 'foo_bar', 'ns::name', 'issue#12', 'proj-4821', 'look~here', 'x <tag> y', '<b>bold']) b,
         unnest(ARRAY['english', 'simple']::regconfig[]) c
     WHERE history._document_vector(b, c) IS DISTINCT FROM history._document_vector(b || ' <( >(', c)$$,
    '(m) the fast path gives what the general path gives, for words, punctuation and each character of its test, in english and simple');
SELECT history.post_message('pf-strike', 'pf-k', 'pf-bob', '~drafts~ are gone', '2026-03-01 10:09:30+00');
INSERT INTO pf_results VALUES ('strike', history._search_history(pg_temp.run('k'), 'drafts'));
SELECT is(pg_temp.hit_ids('strike'), ARRAY['pf-strike'], '(m) "drafts" finds a struck-through ~drafts~');

-- ---------------------------------------------- (n) an account outside the run never changes scores
-- Names count only for the people of the run (its audience, the requester
-- and linked accounts, the agent). Fault: the name lookup reads every
-- account, so a stranger named like a query word makes it a name term and
-- the authors named by it named speakers: the scores move. Here pf-zed (in
-- pf-k, outside the run) wrote one of the matches; it is named twice, the
-- search repeated in a new run after each.
SELECT history.upsert_account('pf-zed', 'person');
SELECT history.add_member('pf-k', 'pf-zed', '2026-01-01 00:00+00');
SELECT history.post_message('pf-kz', 'pf-k', 'pf-zed', 'pfkumquat and pfmedlar', '2026-03-01 10:09:40+00');
CREATE FUNCTION pg_temp.k_scores(p_name text) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_agg(jsonb_build_object('id', h.message_id, 'score', h.score, 'reasons', h.reasons) ORDER BY h.message_id)
      FROM pf_results r, unnest((r.result).hits) h WHERE r.name = p_name $$;
INSERT INTO pf_runs VALUES
    ('n0', history.begin_run('pf-bot', 'pf-k', 'pf-alice', 'pf-know', ARRAY['pf-k2', 'pf-k7', 'pf-k8'], ARRAY['pf-alice', 'pf-bob']));
INSERT INTO pf_results VALUES ('n0', history._search_history(pg_temp.run('n0'), 'pfkumquat pfmedlar'));
SELECT history.upsert_account('pf-zed', 'person', 'Pfkumquat');
SELECT history.upsert_account('pf-stranger', 'person', 'Pfmedlar');
INSERT INTO pf_runs VALUES
    ('n1', history.begin_run('pf-bot', 'pf-k', 'pf-alice', 'pf-know', ARRAY['pf-k2', 'pf-k7', 'pf-k8'], ARRAY['pf-alice', 'pf-bob']));
INSERT INTO pf_results VALUES ('n1', history._search_history(pg_temp.run('n1'), 'pfkumquat pfmedlar'));
SELECT is(jsonb_array_length(pg_temp.k_scores('n0')), 2, '(n) control: two hits, pf-k3 and pf-kz (written by pf-zed)');
SELECT is(pg_temp.k_scores('n1'), pg_temp.k_scores('n0'),
          '(n) display names of accounts outside the run (pf-zed, an author; pf-stranger, in no conversation) change no score or reason');


-- ---------------------------------------------- (o) the window's ends, end to end
-- Every window is [since, until): of an audience member (pf-p2 in pf-b) and
-- of the agent (in pf-b2). A match at the instant one joined is in, at the
-- instant it left out, and the last instant before joining out.
--   pf-b    group    pf-bot, pf-p1 since 01-01; pf-p2 02-01 .. 02-10
--   pf-b2   group    pf-p1 since 01-01; pf-bot 02-01 .. 02-10
DO $b$
BEGIN
    PERFORM history.upsert_conversation(c, 'group') FROM unnest(ARRAY['pf-b', 'pf-b2']) c;
    PERFORM history.add_member(c, a, s::timestamptz) FROM (VALUES ('pf-b', 'pf-bot', '2026-01-01 00:00+00'),
        ('pf-b', 'pf-p1', '2026-01-01 00:00+00'), ('pf-b', 'pf-p2', '2026-02-01 00:00+00'),
        ('pf-b2', 'pf-p1', '2026-01-01 00:00+00'), ('pf-b2', 'pf-bot', '2026-02-01 00:00+00')) v(c, a, s);
    PERFORM history.post_message(m, c, 'pf-p1', b, s::timestamptz) FROM (VALUES
        ('pf-b-pre', 'pf-b', 'pfsloe', '2026-01-31 23:59:59.999999+00'),
        ('pf-b-join', 'pf-b', 'pfsloe', '2026-02-01 00:00+00'),
        ('pf-b-mid', 'pf-b', 'pfsloe', '2026-02-05 00:00+00'),
        ('pf-b-left', 'pf-b', 'pfsloe', '2026-02-10 00:00+00'),
        ('pf-b2-pre', 'pf-b2', 'pfsloe', '2026-01-31 23:59:59.999999+00'),
        ('pf-b2-join', 'pf-b2', 'pfsloe', '2026-02-01 00:00+00'),
        ('pf-b2-left', 'pf-b2', 'pfsloe', '2026-02-10 00:00+00'),
        -- not matches: neighbours at the window's ends (ids order ties on sent_at)
        ('pf-b2-a', 'pf-b2', 'at the join', '2026-02-01 00:00+00'),
        ('pf-b2-last', 'pf-b2', 'the last before leaving', '2026-02-09 23:59:59.999999+00'),
        ('pf-b2-z', 'pf-b2', 'at the leaving', '2026-02-10 00:00+00'),
        ('pf-b-now', 'pf-b', 'and?', '2026-02-12 00:00+00')) v(m, c, b, s);
    PERFORM history.remove_member('pf-b', 'pf-p2', '2026-02-10 00:00+00');
    PERFORM history.remove_member('pf-b2', 'pf-bot', '2026-02-10 00:00+00');
END
$b$;
INSERT INTO pf_runs VALUES
    ('b12', history.begin_run('pf-bot', 'pf-b', 'pf-p1', 'pf-b-now', '{}', ARRAY['pf-p1', 'pf-p2'])),
    ('b1', history.begin_run('pf-bot', 'pf-b', 'pf-p1', 'pf-b-now', '{}', ARRAY['pf-p1']));
INSERT INTO pf_results VALUES ('b12', history._search_history(pg_temp.run('b12'), 'pfsloe')),
                              ('b1', history._search_history(pg_temp.run('b1'), 'pfsloe'));
SELECT is(pg_temp.hit_ids('b12'), ARRAY['pf-b-join', 'pf-b-mid'],
          '(o) audience pf-p1, pf-p2: the match at the instant pf-p2 joined is a hit; at the instant it left, and just before it joined, not');
SELECT is(ARRAY[(pg_temp.audit('b12')).excluded_perspective, (pg_temp.audit('b12')).excluded_audience], ARRAY[2, 3],
          '(o) and the audit counts pf-b2-pre, pf-b2-left under perspective (the agent''s window), pf-b-pre, pf-b-left and pf-b2-join (pf-p2 never read pf-b2) under audience');
SELECT is(pg_temp.hit_ids('b1'), ARRAY['pf-b-join', 'pf-b-left', 'pf-b-mid', 'pf-b-pre', 'pf-b2-join'],
          '(o) audience pf-p1: in pf-b2 the match at the instant the agent joined is a hit; at the instant it left, and just before it joined, not');
SELECT is((SELECT array_agg(n->>'message_id') FROM pf_results r, unnest((r.result).hits) h,
                  jsonb_array_elements(h.before) n WHERE r.name = 'b1' AND h.message_id = 'pf-b2-join'),
          ARRAY['pf-b2-a'], '(o) its before-neighbour: pf-b2-a, sent at the instant the agent joined (pf-b2-pre, just before, is not)');
SELECT is((SELECT array_agg(n->>'message_id') FROM pf_results r, unnest((r.result).hits) h,
                  jsonb_array_elements(h.after) n WHERE r.name = 'b1' AND h.message_id = 'pf-b2-join'),
          ARRAY['pf-b2-last'], '(o) its after-neighbour: pf-b2-last, the last instant before the agent left (not pf-b2-left, pf-b2-z, sent at it)');

SELECT * FROM finish();
ROLLBACK;
