-- Revert history-search:_require_alive from pg
BEGIN;

DROP FUNCTION history._require_alive(bigint, text);

COMMIT;
