-- Revert history-search:_query_terms from pg
BEGIN;

DROP FUNCTION history._query_terms(text, regconfig[], integer);

COMMIT;
