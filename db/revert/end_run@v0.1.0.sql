-- Revert history-search:end_run from pg
BEGIN;

DROP FUNCTION history.end_run(uuid);

COMMIT;
