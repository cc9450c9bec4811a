-- Revert history-search:purge from pg
BEGIN;

DROP PROCEDURE history.purge(timestamptz, integer);

COMMIT;
