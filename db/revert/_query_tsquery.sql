-- Revert history-search:_query_tsquery from pg
BEGIN;

DROP FUNCTION history._query_tsquery(text, regconfig[], integer);

COMMIT;
