-- Revert history-search:_newest_matches from pg
BEGIN;

DROP FUNCTION history._newest_matches(tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text);

COMMIT;
