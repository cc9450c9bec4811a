-- Revert history-search:_counting_pass from pg
BEGIN;

DROP FUNCTION history._counting_pass(history._search_scope, tsquery, text, timestamptz, timestamptz, integer);

COMMIT;
