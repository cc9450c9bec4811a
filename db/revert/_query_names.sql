-- Revert history-search:_query_names from pg
BEGIN;

DROP FUNCTION history._query_names(integer, text[], bigint[], regconfig[]);

COMMIT;
