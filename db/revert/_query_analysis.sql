-- Revert history-search:_query_analysis from pg
BEGIN;

DROP FUNCTION history._query_analysis(text, regconfig[], integer);

COMMIT;
