-- Audiences under clock skew. A membership whose since is ahead of the
-- database clock is open for the default audience; the delivery check of a
-- reply counts the members open now and those whose membership covers the
-- reply's sent_at. The instants that bound [since, until) are cases of their
-- own. now() is this transaction's start, so memberships placed relative to
-- it land exactly on the boundaries.
BEGIN;
SELECT plan(22);

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

-- ======================================================== the default audience
-- lc-edge at T = 2026-06-01: who is open at T?
SELECT history.add_member('lc-edge', a, s) FROM (VALUES ('lc-bot', '2026-01-01'::timestamptz), ('lc-alice', '2026-06-01'),
        ('lc-bob', '2026-01-01'), ('lc-carol', '2026-01-01'), ('lc-dave', '2026-06-01 00:05'), ('lc-eve', '2026-01-01')) v(a, s);
SELECT history.remove_member('lc-edge', a, u) FROM (VALUES ('lc-bob', '2026-06-01'::timestamptz),
        ('lc-carol', '2026-06-01 00:00:00.000001'), ('lc-eve', '2026-05-31')) v(a, u);
CREATE TEMP TABLE t_key ON COMMIT DROP AS SELECT account_id, account_key FROM history.accounts;
SELECT is((SELECT array_agg(k.account_id ORDER BY k.account_id)
             FROM unnest(history._default_audience((SELECT conversation_key FROM history.conversations WHERE conversation_id = 'lc-edge'),
                                                   (SELECT account_key FROM t_key WHERE account_id = 'lc-bot'), '2026-06-01', 1)) x
             JOIN t_key k ON k.account_key = x),
          ARRAY['lc-alice', 'lc-carol', 'lc-dave'],
          '_default_audience at T: since = T is open, since after T (clock ahead) is open, until = T is not, until just after T is, an ended one is not');

-- At begin_run: a join recorded five minutes ahead of the clock counts.
SELECT history.add_member('lc-team', 'lc-eve', now() + interval '5 minutes');
CREATE TEMP TABLE t_team ON COMMIT DROP AS SELECT history.begin_run('lc-bot', 'lc-team', 'lc-alice', 'lc-ask') AS run;
SELECT ok((SELECT (SELECT account_key FROM t_key WHERE account_id = 'lc-eve') = ANY (r.audience_keys)
             FROM history.runs r WHERE r.run_token = (SELECT run FROM t_team)),
          'begin_run: a member whose since is ahead of the clock is in the default audience');
SELECT is((SELECT count(*)::int FROM unnest((history._search_history((SELECT run FROM t_team), 'zebra launch code')).hits) h
            WHERE h.message_id = 'lc-alice-1'), 0,
          'alice''s direct conversation is not searched for a group eve is about to read');
SELECT history.add_member('lc-team', 'lc-bob', now());
SELECT history.remove_member('lc-team', 'lc-eve', now() + interval '5 minutes');
SELECT history.add_member('lc-team', 'lc-carol', now() - interval '1 hour');
SELECT history.remove_member('lc-team', 'lc-carol', now());
CREATE TEMP TABLE t_team2 ON COMMIT DROP AS SELECT history.begin_run('lc-bot', 'lc-team', 'lc-alice', 'lc-ask') AS run;
SELECT is((SELECT array_agg(k.account_id ORDER BY k.account_id) FROM history.runs r, unnest(r.audience_keys) x
             JOIN t_key k ON k.account_key = x WHERE r.run_token = (SELECT run FROM t_team2)),
          ARRAY['lc-alice', 'lc-bob', 'lc-eve'],
          'begin_run: since = now is open, until = now is not, an until ahead of the clock still is');

-- ======================================================== the delivery audience
-- lc-solo: the bot and alice; alice's run finds her own direct conversation.
SELECT history.upsert_conversation('lc-solo', 'group');
SELECT history.add_member('lc-solo', a, '2026-01-01') FROM (VALUES ('lc-bot'), ('lc-alice')) v(a);
SELECT history.post_message('lc-solo-ask', 'lc-solo', 'lc-alice', 'remind me of the zebra code', '2026-02-05');
CREATE TEMP TABLE t_solo ON COMMIT DROP AS SELECT history.begin_run('lc-bot', 'lc-solo', 'lc-alice', 'lc-solo-ask') AS run;
SELECT is((SELECT array_agg(h.message_id) FROM unnest((history._search_history((SELECT run FROM t_solo), '4242')).hits) h),
          ARRAY['lc-alice-1'], 'alice alone with the bot: her direct conversation is evidence');
SELECT is((SELECT count(*)::int FROM history.check_delivery((SELECT run FROM t_solo))), 0, 'nothing fails delivery yet');

-- eve's join is recorded five minutes ahead of the clock, the reply six.
SAVEPOINT s;
SELECT history.add_member('lc-solo', 'lc-eve', now() + interval '5 minutes');
SELECT results_eq($$SELECT message_id, reason FROM history.check_delivery((SELECT run FROM t_solo))$$,
                  $$VALUES ('lc-alice-1'::text, 'audience'::text)$$,
                  'check_delivery: a join ahead of the clock is in the recomputed audience');
SELECT throws_ok($$SELECT history.record_reply((SELECT run FROM t_solo), 'lc-reply', 'it is 4242', now() + interval '6 minutes')$$,
                 'HS005', NULL, 'record_reply: blocked for a reader whose join is ahead of the clock');
ROLLBACK TO SAVEPOINT s;

-- eve was a member when the reply was sent, and left before now.
SELECT history.add_member('lc-solo', 'lc-eve', now() - interval '10 minutes');
SELECT history.remove_member('lc-solo', 'lc-eve', now() - interval '1 minute');
SELECT is((SELECT count(*)::int FROM history.check_delivery((SELECT run FROM t_solo))), 0,
          'check_delivery (no reply yet): eve has left, she is not in the audience now');
SELECT throws_ok($$SELECT history.record_reply((SELECT run FROM t_solo), 'lc-reply', 'it is 4242', now() - interval '2 minutes')$$,
                 'HS005', NULL, 'record_reply: blocked when a member at the reply''s sent_at may not read the evidence');
SELECT throws_ok($$SELECT history.record_reply((SELECT run FROM t_solo), 'lc-reply', 'it is 4242', now() - interval '10 minutes')$$,
                 'HS005', NULL, 'record_reply: sent_at = since, eve is a member then: blocked');
SELECT throws_ok($$SELECT history.record_reply((SELECT run FROM t_solo), 'lc-reply', 'it is 4242', now() - interval '1 minute 1 microsecond')$$,
                 'HS005', NULL, 'record_reply: sent_at just before until, eve is a member then: blocked');
SELECT throws_ok($$SELECT history.record_reply((SELECT run FROM t_solo), 'lc-reply', 'it is 4242', NULL)$$,
                 'HS001', NULL, 'record_reply: a null sent_at is HS001 before any check');
SELECT is((SELECT count(*)::int FROM history.messages WHERE message_id = 'lc-reply'), 0, 'nothing was posted');
SAVEPOINT s2;
SELECT lives_ok($$SELECT history.record_reply((SELECT run FROM t_solo), 'lc-reply', 'it is 4242', now() - interval '1 minute')$$,
                'record_reply: sent_at = until, eve had left: delivered');
ROLLBACK TO SAVEPOINT s2;
SELECT lives_ok($$SELECT history.record_reply((SELECT run FROM t_solo), 'lc-reply', 'it is 4242', now() - interval '11 minutes')$$,
                'record_reply: sent_at before eve joined: delivered');
SELECT ok((SELECT ended_at IS NOT NULL FROM history.runs WHERE run_token = (SELECT run FROM t_solo)), 'the run ended');

-- ======================================================== the delivery recheck at the instants
-- A membership closed after the search, back-dated onto the evidence's sent_at
-- exactly, no longer holds it ([since, until) excludes until); a microsecond
-- later it still does. For the agent that is perspective, for an explicit
-- audience account audience.
SELECT history.upsert_conversation('lc-bound', 'group');
SELECT history.add_member('lc-bound', a, '2026-01-01') FROM (VALUES ('lc-bot'), ('lc-alice')) v(a);
SELECT history.post_message('lc-b1', 'lc-bound', 'lc-alice', 'the quokka budget', '2026-03-01 12:00');
SELECT history.post_message('lc-b2', 'lc-bound', 'lc-alice', 'any news?', '2026-03-02');
CREATE TEMP TABLE t_bound ON COMMIT DROP AS
SELECT history.begin_run('lc-bot', 'lc-bound', 'lc-alice', 'lc-b2', p_audience => ARRAY['lc-alice']) AS run;
SELECT is((SELECT array_agg(h.message_id) FROM unnest((history._search_history((SELECT run FROM t_bound), 'quokka')).hits) h),
          ARRAY['lc-b1'], 'the evidence at 12:00 is found');
SAVEPOINT b;
SELECT history.remove_member('lc-bound', 'lc-bot', '2026-03-01 12:00');
SELECT results_eq($$SELECT message_id, reason FROM history.check_delivery((SELECT run FROM t_bound))$$,
                  $$VALUES ('lc-b1'::text, 'perspective'::text)$$, 'check_delivery: the agent left at the evidence''s instant: perspective');
ROLLBACK TO SAVEPOINT b;
SELECT history.remove_member('lc-bound', 'lc-bot', '2026-03-01 12:00:00.000001');
SELECT is((SELECT count(*)::int FROM history.check_delivery((SELECT run FROM t_bound))), 0,
          'check_delivery: the agent left a microsecond after the evidence: it passes');
SAVEPOINT b;
SELECT history.remove_member('lc-bound', 'lc-alice', '2026-03-01 12:00');
SELECT results_eq($$SELECT message_id, reason FROM history.check_delivery((SELECT run FROM t_bound))$$,
                  $$VALUES ('lc-b1'::text, 'audience'::text)$$, 'check_delivery: the audience account left at the evidence''s instant: audience');
ROLLBACK TO SAVEPOINT b;
SELECT history.remove_member('lc-bound', 'lc-alice', '2026-03-01 12:00:00.000001');
SELECT is((SELECT count(*)::int FROM history.check_delivery((SELECT run FROM t_bound))), 0,
          'check_delivery: the audience account left a microsecond after the evidence: it passes');

SELECT * FROM finish();
ROLLBACK;
