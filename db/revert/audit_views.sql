-- Revert history-search:audit_views from pg
BEGIN;

DROP VIEW history.search_audit_messages;
DROP VIEW history.search_audit;

COMMIT;
