-- Cases written for faults planted in the SQL that the rest of the suite
-- missed (issue 13, item 6; docs/testing.md, "Planted faults"). Each block
-- names the fault it catches.
BEGIN;
SELECT plan(16);

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
               (SELECT array_agg(account_key) FROM history.accounts WHERE account_id IN ('pf-p1', 'pf-p2', 'pf-p3')),
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
               (SELECT array_agg(account_key) FROM history.accounts
                 WHERE account_id BETWEEN 'pf-w01' AND 'pf-w' || lpad(p_last::text, 2, '0')), NULL) w
      JOIN history.conversations c ON c.conversation_key = w.conversation_key $$;
SELECT is(pg_temp.w_windows(19), ARRAY['pf-w-all', 'pf-w-most'], '(h) control: 19 accounts read both channels');
SELECT is(pg_temp.w_windows(20), ARRAY['pf-w-all'],
          '(h) the 20th account, outside the pivots'' sample, never read pf-w-most: it is not a window');

SELECT * FROM finish();
ROLLBACK;
