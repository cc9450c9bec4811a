-- Revert history-search:check_delivery from pg
BEGIN;

DROP FUNCTION history.check_delivery(uuid);

COMMIT;
