-- Revert history-search:_normalise_query from pg
BEGIN;

DROP FUNCTION history._normalise_query(text);

COMMIT;
