-- Revert history-search:status_view from pg
BEGIN;

DROP VIEW history.status;
REVOKE EXECUTE ON FUNCTION history.schema_release() FROM history_auditor;

COMMIT;
