-- Verify history-search:audit_views_by_tenant on pg
BEGIN;

SELECT search_event_id, tenant_id, agent_id, status FROM history.search_audit WHERE false;
SELECT search_event_id, tenant_id, message_id, conversation_id FROM history.search_audit_messages WHERE false;
SELECT 1 / pg_catalog.has_table_privilege('history_auditor', 'history.search_audit_messages', 'select')::int;

ROLLBACK;
