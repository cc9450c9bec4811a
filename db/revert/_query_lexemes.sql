-- Revert history-search:_query_lexemes from pg
BEGIN;

DROP FUNCTION history._query_lexemes(text, regconfig[]);

COMMIT;
