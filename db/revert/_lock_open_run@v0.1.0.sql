-- Revert history-search:_lock_open_run from pg
BEGIN;

DROP FUNCTION history._lock_open_run(uuid);

COMMIT;
