-- Delivery (SPEC §5): check_delivery, record_reply, and replies that keep
-- their sources' restrictions in later runs, at any depth of lineage.
BEGIN;
SELECT plan(20);

SELECT history.upsert_account(a, k) FROM (VALUES ('bot', 'agent'), ('alice', 'person'), ('alice-mail', 'person'),
                                                ('bob', 'person'), ('carol', 'person')) v(a, k);
SELECT history.upsert_conversation(c, k) FROM (VALUES ('team', 'group'), ('dm-mail', 'direct'), ('dm-alice', 'direct'),
                                                     ('ops', 'group')) v(c, k);
SELECT history.add_member(c, a, '2026-01-01') FROM (VALUES ('team', 'bot'), ('team', 'alice'), ('team', 'bob'),
        ('dm-mail', 'bot'), ('dm-mail', 'alice-mail'), ('dm-alice', 'bot'), ('dm-alice', 'alice'),
        ('ops', 'bot'), ('ops', 'alice'), ('ops', 'bob'), ('ops', 'carol')) v(c, a);
SELECT history.link_identity('proof-1', 'alice', 'alice-mail', '2026-01-10');
SELECT history.post_message('mail-1', 'dm-mail', 'alice-mail', 'the hosting quote is forty thousand', '2026-02-01');
SELECT history.post_message('team-1', 'team', 'bob', 'hosting decision next week', '2026-02-02');
SELECT history.post_message('ask-1', 'dm-alice', 'alice', 'what was the hosting quote?', '2026-02-03');

CREATE TEMP TABLE t_run ON COMMIT DROP AS
SELECT history.begin_run('bot', 'dm-alice', 'alice', 'ask-1') AS run;

SELECT is((SELECT array_agg(h.message_id) FROM unnest((history._search_history((SELECT run FROM t_run), 'quote forty')).hits) h),
          ARRAY['mail-1'], 'alice''s DM run finds her linked mail thread (direct conversation via proof)');
SELECT is((SELECT proof_keys FROM history.run_evidence e JOIN history.messages m USING (message_key) WHERE m.message_id = 'mail-1'),
          ARRAY[(SELECT proof_key FROM history.identity_proofs WHERE proof_id = 'proof-1')], 'evidence records the proof it relied on');
SELECT is((SELECT count(*)::int FROM history.check_delivery((SELECT run FROM t_run))), 0, 'clean run: nothing fails delivery');

-- A revoked proof blocks the reply; nothing is posted and the run stays open.
SAVEPOINT before_revoke;
SELECT history.revoke_proof('proof-1', '2026-02-04');
SELECT results_eq($$SELECT message_id, reason FROM history.check_delivery((SELECT run FROM t_run))$$,
                  $$VALUES ('mail-1'::text, 'proof_revoked'::text)$$, 'revoked proof is reported as proof_revoked');
SELECT throws_ok($$SELECT history.record_reply((SELECT run FROM t_run), 'reply-x', 'forty', '2026-02-04')$$,
                 'HS005', NULL, 'record_reply is blocked by the revoked proof');
SELECT is((SELECT count(*)::int FROM history.messages WHERE message_id = 'reply-x'), 0, 'nothing was posted');
SELECT ok((SELECT ended_at IS NULL FROM history.runs WHERE run_token = (SELECT run FROM t_run)), 'the run is still open');
ROLLBACK TO SAVEPOINT before_revoke;

-- Deleted evidence blocks the reply.
SAVEPOINT before_delete;
SELECT history.delete_message('mail-1', '2026-02-04');
SELECT results_eq($$SELECT message_id, reason FROM history.check_delivery((SELECT run FROM t_run))$$,
                  $$VALUES ('mail-1'::text, 'deleted'::text)$$, 'deleted evidence is reported');
SELECT throws_ok($$SELECT history.record_reply((SELECT run FROM t_run), 'reply-x', 'forty', '2026-02-04')$$,
                 'HS005', NULL, 'record_reply is blocked by deleted evidence');
ROLLBACK TO SAVEPOINT before_delete;

-- A clean reply: posted with the evidence as lineage, run ended.
SELECT lives_ok($$SELECT history.record_reply((SELECT run FROM t_run), 'reply-1', 'it was forty thousand', '2026-02-05')$$,
                'a clean run delivers its reply');
SELECT is((SELECT array_agg(s.message_id ORDER BY s.message_id) FROM history.message_sources ms
             JOIN history.messages r ON r.message_key = ms.message_key JOIN history.messages s ON s.message_key = ms.source_key
            WHERE r.message_id = 'reply-1'), ARRAY['mail-1'], 'the reply''s lineage is the run''s evidence');
SELECT ok((SELECT ended_at IS NOT NULL FROM history.runs WHERE run_token = (SELECT run FROM t_run)), 'the run ended');
SELECT throws_ok($$SELECT * FROM history.check_delivery((SELECT run FROM t_run))$$, 'HS002', NULL, 'an ended run is HS002');
SELECT is((SELECT array_agg(entry_kind ORDER BY trace_key) FROM history.run_trace
            WHERE run_key = (SELECT run_key FROM history.runs WHERE run_token = (SELECT run FROM t_run))),
          ARRAY['begin', 'search_audit', 'delivery', 'end'], 'the trace records the delivery');

-- Replies built on replies keep the restriction, at any depth.
SELECT history.post_message('chain-1', 'dm-alice', 'bot', 'hosting summary one', '2026-02-06', ARRAY['reply-1']);
SELECT history.post_message('chain-' || i, 'dm-alice', 'bot', 'hosting summary ' || i, '2026-02-06'::timestamptz + i * interval '1 minute',
                            ARRAY['chain-' || (i - 1)])
  FROM generate_series(2, 40) i;
SELECT history.post_message('team-summary', 'team', 'bot', 'hosting summary for the team', '2026-03-01', ARRAY['chain-40']);
SELECT history.post_message('team-ask', 'team', 'bob', 'anything on hosting?', '2026-03-02');

SELECT is((SELECT count(*)::int FROM history.message_lineage l JOIN history.messages m USING (message_key)
            WHERE m.message_id = 'team-summary'), 42, 'the closure of a deep chain holds every ancestor');
SELECT set_eq(
    $$SELECT l.ancestor_key FROM history.message_lineage l JOIN history.messages m USING (message_key) WHERE m.message_id = 'team-summary'$$,
    $$WITH RECURSIVE walk(k) AS (
          SELECT ms.source_key FROM history.message_sources ms JOIN history.messages m USING (message_key) WHERE m.message_id = 'team-summary'
          UNION SELECT ms.source_key FROM walk JOIN history.message_sources ms ON ms.message_key = walk.k)
      SELECT k FROM walk$$,
    'the precomputed closure equals walking the chain');

CREATE TEMP TABLE t_team_run ON COMMIT DROP AS
SELECT history.begin_run('bot', 'team', 'bob', 'team-ask') AS run;
SELECT is((SELECT array_agg(h.message_id ORDER BY h.message_id) FROM unnest((history._search_history((SELECT run FROM t_team_run), 'hosting summary')).hits) h),
          ARRAY['team-1'], 'a team run never sees what was built, 42 levels deep, on alice''s private mail');
SELECT is((SELECT excluded_lineage FROM history.conversation_search_events
            WHERE run_key = (SELECT run_key FROM history.runs WHERE run_token = (SELECT run FROM t_team_run))),
          1, 'the team summary was excluded by the lineage rule');

-- The check reads the evidence as a set: the audience's windows are computed
-- once, however many messages the run holds (not once or twice per message).
SELECT history.post_message('ops-' || i, 'ops', 'carol', 'budget line ' || i, '2026-03-01'::timestamptz + i * interval '1 minute')
  FROM generate_series(1, 20) i;
SELECT history.post_message('ops-ask', 'ops', 'alice', 'what is the budget?', '2026-03-02');
CREATE FUNCTION pg_temp.windows_computed_by_check(p_run uuid) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_before bigint := (SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions
                         WHERE schemaname = 'history' AND funcname = '_audience_windows');
BEGIN
    PERFORM * FROM history.check_delivery(p_run);
    RETURN (SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions
             WHERE schemaname = 'history' AND funcname = '_audience_windows') - v_before;
END $$;
CREATE TEMP TABLE t_ops ON COMMIT DROP AS
SELECT history.begin_run('bot', 'ops', 'alice', 'ops-ask') AS small, history.begin_run('bot', 'ops', 'alice', 'ops-ask') AS large;
DO $$
BEGIN
    PERFORM history._search_history(small, 'line', 'anyone', NULL, NULL, 1),
            history._search_history(large, 'budget', 'anyone', NULL, NULL, 20) FROM t_ops;
END $$;
SELECT ok((SELECT evidence_count FROM history.runs WHERE run_token = (SELECT large FROM t_ops))
          > 2 * (SELECT evidence_count FROM history.runs WHERE run_token = (SELECT small FROM t_ops)),
          'two runs in a channel with an audience, one holding far more evidence');
SET LOCAL track_functions = 'pl';
SELECT is(pg_temp.windows_computed_by_check((SELECT large FROM t_ops)),
          pg_temp.windows_computed_by_check((SELECT small FROM t_ops)),
          'check_delivery computes the audience''s windows as often for either run');

SELECT * FROM finish();
ROLLBACK;
