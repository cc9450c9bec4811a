-- Revert history-search:release from pg
BEGIN;

DROP FUNCTION history.schema_release();

COMMIT;
