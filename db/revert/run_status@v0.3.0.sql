-- Revert history-search:run_status from pg
BEGIN;

DROP FUNCTION history.run_status(uuid);

COMMIT;
