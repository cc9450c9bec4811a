-- Verify history-search:audit_views on pg
BEGIN;

SELECT search_event_id, run_key, run_token_sha256, agent_id, query_digest, status, excluded_budget FROM history.search_audit WHERE false;
SELECT search_event_id, message_id, role, hit_rank, total FROM history.search_audit_messages WHERE false;
SELECT 1 / pg_catalog.has_table_privilege('history_auditor', 'history.search_audit', 'select')::int;

ROLLBACK;
