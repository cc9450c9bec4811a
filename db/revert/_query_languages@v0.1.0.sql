-- Revert history-search:_query_languages from pg
BEGIN;

DROP FUNCTION history._query_languages();

COMMIT;
