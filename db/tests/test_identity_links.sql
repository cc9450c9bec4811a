-- Identity links join person accounts only: a proof naming an agent is
-- HS001 naming it, and a component never runs through an agent account (a
-- database of an earlier release may still hold such a proof).
BEGIN;
SELECT plan(10);

SELECT history.upsert_account(a, k) FROM (VALUES ('lc-bot', 'agent'), ('lc-bot2', 'agent'), ('lc-alice', 'person'),
        ('lc-bob', 'person'), ('lc-carol', 'person'), ('lc-dave', 'person'), ('lc-eve', 'person')) v(a, k);
SELECT history.upsert_conversation(c, k) FROM (VALUES ('lc-dm-bob', 'direct'), ('lc-dm-carol', 'direct'),
        ('lc-dm-alice', 'direct'), ('lc-team', 'group'), ('lc-edge', 'group')) v(c, k);
SELECT history.add_member(c, a, '2026-01-01') FROM (VALUES ('lc-dm-bob', 'lc-bot'), ('lc-dm-bob', 'lc-bob'),
        ('lc-dm-carol', 'lc-bot'), ('lc-dm-carol', 'lc-carol'), ('lc-dm-alice', 'lc-bot'), ('lc-dm-alice', 'lc-alice'),
        ('lc-team', 'lc-bot'), ('lc-team', 'lc-alice')) v(c, a);
SELECT history.post_message('lc-bob-1', 'lc-dm-bob', 'lc-bob', 'my salary is ninety thousand', '2026-02-01');
SELECT history.post_message('lc-carol-1', 'lc-dm-carol', 'lc-carol', 'what is the salary band?', '2026-02-02');
SELECT history.post_message('lc-alice-1', 'lc-dm-alice', 'lc-alice', 'the zebra launch code is 4242', '2026-02-03');
SELECT history.post_message('lc-ask', 'lc-team', 'lc-alice', 'when is the zebra launch?', '2026-02-04');

-- ======================================================== links join persons only
SELECT throws_ok($$SELECT history.link_identity('lc-p1', 'lc-carol', 'lc-bot', '2026-02-01')$$, 'HS001',
                 'account ''lc-bot'' is an agent; a proof links person accounts only',
                 'link_identity: a person linked to an agent account is HS001 naming the agent');
SELECT throws_ok($$SELECT history.link_identity('lc-p1', 'lc-bot', 'lc-carol', '2026-02-01')$$, 'HS001',
                 'account ''lc-bot'' is an agent; a proof links person accounts only',
                 'link_identity: the agent named first is HS001 too');
SELECT throws_ok($$SELECT history.link_identity('lc-p1', 'lc-bot', 'lc-bot2', '2026-02-01')$$, 'HS001', NULL,
                 'link_identity: two agents are HS001');
SELECT is((SELECT count(*)::int FROM history.identity_proofs WHERE proof_id = 'lc-p1'), 0, 'link_identity: no proof was recorded');
SELECT ok((SELECT a.component_key = a.account_key FROM history.accounts a WHERE a.account_id = 'lc-carol'),
          'link_identity: carol is still alone in her component');

CREATE TEMP TABLE t_carol ON COMMIT DROP AS SELECT history.begin_run('lc-bot', 'lc-dm-carol', 'lc-carol', 'lc-carol-1') AS run;
SELECT is((SELECT count(*)::int FROM unnest((history._search_history((SELECT run FROM t_carol), 'salary ninety')).hits) h
            WHERE h.message_id = 'lc-bob-1'), 0, 'carol''s run never sees bob''s direct conversation with the bot');
SELECT lives_ok($$SELECT history.link_identity('lc-p2', 'lc-carol', 'lc-dave', '2026-02-01')$$, 'link_identity: two persons link');

-- A database of an earlier release may hold proofs naming an agent: the walk
-- never passes through one (carol - bot - eve stays apart; carol - dave holds).
INSERT INTO history.identity_proofs (proof_id, account_a_key, account_b_key, verified_at)
SELECT p, (SELECT account_key FROM history.accounts WHERE account_id = a), (SELECT account_key FROM history.accounts WHERE account_id = b), '2026-02-01'
  FROM (VALUES ('lc-old-1', 'lc-carol', 'lc-bot'), ('lc-old-2', 'lc-bot', 'lc-eve')) v(p, a, b);
SELECT history._recompute_components(ARRAY(SELECT account_key FROM history.accounts WHERE account_id IN ('lc-carol', 'lc-bot', 'lc-eve')), 1);
SELECT is((SELECT array_agg(a.account_id ORDER BY a.account_id) FROM history.accounts a
            WHERE a.component_key = (SELECT component_key FROM history.accounts WHERE account_id = 'lc-carol')),
          ARRAY['lc-carol', 'lc-dave'], '_recompute_components: a proof naming an agent joins nothing');
SELECT ok((SELECT a.component_key = a.account_key FROM history.accounts a WHERE a.account_id = 'lc-bot'),
          '_recompute_components: the agent is a component of its own');
SELECT ok((SELECT a.component_key = a.account_key FROM history.accounts a WHERE a.account_id = 'lc-eve'),
          '_recompute_components: nothing reaches eve through the agent');
DELETE FROM history.identity_proofs WHERE proof_id LIKE 'lc-old-%';

SELECT * FROM finish();
ROLLBACK;
