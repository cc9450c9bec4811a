-- Revert history-search:_run_label from pg
BEGIN;

DROP FUNCTION history._run_label(uuid);

COMMIT;
