-- Revert history-search:_refresh_name_terms from pg
BEGIN;

DROP FUNCTION history._refresh_name_terms(bigint[], boolean);

COMMIT;
