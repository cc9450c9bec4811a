-- Revert history-search:_ranking_pass from pg
BEGIN;

DROP FUNCTION history._ranking_pass(history._search_scope, tsquery, text[], text[], bigint[], bigint[], timestamptz, timestamptz, history.search_settings, integer, tstzrange, tsquery, boolean);

COMMIT;
