-- Revert history-search:_run_scope from pg
BEGIN;

DROP FUNCTION history._run_scope(history.runs);

COMMIT;
