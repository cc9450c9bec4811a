-- Revert history-search:_newest_matches from pg
BEGIN;

DROP FUNCTION history._newest_matches(tsquery, bigint, bigint[], bigint[], timestamptz, timestamptz, integer, text);

COMMIT;
