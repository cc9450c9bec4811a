-- Revert history-search:_check_search_arguments from pg
BEGIN;

DROP FUNCTION history._check_search_arguments(text, text, timestamptz, timestamptz, integer, integer);

COMMIT;
