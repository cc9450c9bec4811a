-- The functions behind the auditor's views on Citus (_search_audit_rows,
-- _search_audit_messages_rows, _status_rows): on one node, each returns exactly
-- its view's columns (names, types, collations, order) and rows, in two
-- tenants holding the same ids, and the auditor may call them but reads no
-- table through anything else.
BEGIN;
SELECT plan(13);

DO $world$
DECLARE
    v_tenant text;
    v_run uuid;
BEGIN
    FOREACH v_tenant IN ARRAY ARRAY['default', 'acme'] LOOP
        PERFORM history.upsert_account('bot', 'agent', 'Assistant', v_tenant);
        PERFORM history.upsert_account('ann', 'person', 'Ann', v_tenant);
        PERFORM history.upsert_account('ben', 'person', 'Ben', v_tenant);
        PERFORM history.upsert_conversation('team', 'group', 'Team', NULL, v_tenant);
        PERFORM history.add_member('team', 'bot', '2026-01-01 00:00+00', v_tenant);
        PERFORM history.add_member('team', 'ann', '2026-01-01 00:00+00', v_tenant);
        PERFORM history.add_member('team', 'ben', '2026-01-01 00:00+00', v_tenant);
        PERFORM history.post_message('m1', 'team', 'ann', 'the lighthouse budget is approved', '2026-01-02 10:00+00', '{}', v_tenant);
        PERFORM history.post_message('m2', 'team', 'ben', 'lighthouse paint should be blue', '2026-01-03 10:00+00', '{}', v_tenant);
        PERFORM history.post_message('m3', 'team', 'ann', 'thanks for the budget numbers', '2026-01-04 10:00+00', '{}', v_tenant);
        PERFORM history.post_message('cur', 'team', 'ann', 'what about the lighthouse?', '2026-06-01 10:00+00', '{}', v_tenant);
        v_run := history.begin_run('bot', 'team', 'ann', 'cur', '{}', NULL, v_tenant);
        PERFORM history._search_history(v_run, 'lighthouse budget', 'anyone', NULL, NULL, 20);
        PERFORM history._search_history(v_run, 'paint', 'requester', NULL, NULL, 5);
        IF v_tenant = 'acme' THEN
            PERFORM history.end_run(v_run);
        END IF;
    END LOOP;
END
$world$;

CREATE FUNCTION pg_temp.columns(p_relation regclass) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(format('%s %s %s', a.attname, format_type(a.atttypid, a.atttypmod), a.attcollation::regcollation)
                     ORDER BY a.attnum)
      FROM pg_attribute a WHERE a.attrelid = p_relation AND a.attnum > 0 AND NOT a.attisdropped $$;
-- The function's result columns as a view over it declares them, with the collations distribute gives them.
CREATE TEMP VIEW audit_via AS SELECT f.search_event_id, f.run_key, f.run_token_sha256,
       f.tenant_id COLLATE "C" AS tenant_id, f.agent_id COLLATE "C" AS agent_id,
       f.destination_conversation_id COLLATE "C" AS destination_conversation_id,
       f.requester_id COLLATE "C" AS requester_id, f.searched_at, f.query_digest, f.digest_key_id,
       f.query_term_count, f.speaker, f.sent_after, f.sent_before, f.effective_limit, f.hit_count,
       f.selected_count, f.hit_message_ids, f.selected_message_ids, f.excluded_speaker, f.excluded_time,
       f.excluded_perspective, f.excluded_audience, f.excluded_lineage, f.excluded_alive, f.excluded_in_context,
       f.excluded_budget, f.candidates_capped, f.status, f.budget_used, f.budget_remaining
  FROM history._search_audit_rows() f;
CREATE TEMP VIEW messages_via AS SELECT f.search_event_id, f.run_key, f.run_token_sha256,
       f.tenant_id COLLATE "C" AS tenant_id, f.agent_id COLLATE "C" AS agent_id, f.searched_at, f.position,
       f.message_id, f.conversation_id COLLATE "C" AS conversation_id, f.sent_at, f.role, f.hit_message_id,
       f.hit_rank, f.text_score, f.coverage, f.actor, f.conversation, f.participation, f.recency, f.total
  FROM history._search_audit_messages_rows() f;
CREATE TEMP VIEW status_via AS SELECT * FROM history._status_rows();

SELECT is(pg_temp.columns('audit_via'), pg_temp.columns('history.search_audit'),
          '_search_audit_rows: the columns of history.search_audit');
SELECT is(pg_temp.columns('messages_via'), pg_temp.columns('history.search_audit_messages'),
          '_search_audit_messages_rows: the columns of history.search_audit_messages');
SELECT is(pg_temp.columns('status_via'), pg_temp.columns('history.status'),
          '_status_rows: the columns of history.status');

SELECT is((SELECT count(DISTINCT tenant_id)::int FROM history.search_audit), 2, 'searches audited in two tenants');
SELECT set_eq('SELECT * FROM history.search_audit', 'SELECT * FROM history._search_audit_rows()',
              '_search_audit_rows returns the rows of history.search_audit');
SELECT cmp_ok((SELECT count(*) FROM history.search_audit_messages), '>', 0::bigint, 'returned messages audited');
SELECT set_eq('SELECT * FROM history.search_audit_messages', 'SELECT * FROM history._search_audit_messages_rows()',
              '_search_audit_messages_rows returns the rows of history.search_audit_messages');
-- now() is the transaction's start: both reads see the same instant.
SELECT set_eq('SELECT * FROM history.status', 'SELECT * FROM history._status_rows()',
              '_status_rows returns the row of history.status');
SELECT is((SELECT open_runs FROM history._status_rows()), 1::bigint, 'one run open (acme''s ended)');

SET LOCAL ROLE history_auditor;
SELECT is((SELECT count(*)::int FROM history._search_audit_rows()), 4, 'history_auditor: _search_audit_rows is executable');
SELECT lives_ok('SELECT count(*) FROM history._search_audit_messages_rows()',
                'history_auditor: _search_audit_messages_rows is executable');
SELECT lives_ok('SELECT count(*) FROM history._status_rows()', 'history_auditor: _status_rows is executable');
SELECT throws_ok('SELECT count(*) FROM history.messages', '42501', NULL,
                 'history_auditor: message text stays unreadable');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
