-- Verify history-search:core_tables on pg
BEGIN;

SELECT account_key, account_id, kind, display_name, component_key, name_terms, name_languages FROM history.accounts WHERE false;
SELECT 1 / pg_catalog.count(*)::int FROM history.tenants WHERE tenant_key = 1;
SELECT conversation_key, tenant_key, conversation_id, kind, title, language FROM history.conversations WHERE false;
SELECT membership_key, tenant_key, conversation_key, account_key, since, until FROM history.memberships WHERE false;
SELECT message_key, tenant_key, message_id, conversation_key, author_key, sent_at, current_event_key FROM history.messages WHERE false;
SELECT event_key, tenant_key, message_key, event_kind, body, occurred_at FROM history.message_events WHERE false;
SELECT tenant_key, message_key, source_key FROM history.message_sources WHERE false;
SELECT tenant_key, message_key, ancestor_key, ancestor_conversation_key, ancestor_sent_at FROM history.message_lineage WHERE false;
SELECT proof_key, proof_id, account_a_key, account_b_key, verified_at, revoked_at FROM history.identity_proofs WHERE false;
SELECT tenant_key, conversation_key, author_key FROM history.conversation_authors WHERE false;
SELECT message_key, tenant_key, message_id, conversation_key, author_key, sent_at, has_lineage, document FROM history.message_search_documents WHERE false;
SELECT 1 / (history._time_buckets('2000-01-02 01:00:00+00') = '{50,3}')::int;
SELECT 1 / (history._conversation_weeks(3, '2000-01-08 00:00:00+00') = ARRAY[3 * 4194304 + 1 + 2097152]::bigint[])::int;
SELECT 1 / pg_catalog.count(*)::int FROM history.search_settings;
SELECT 1 / pg_catalog.count(*)::int FROM history.write_locks WHERE lock_name = 'identity_proofs';

ROLLBACK;
