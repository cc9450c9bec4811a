-- Revert history-search:_newest_matches from pg
BEGIN;

DROP FUNCTION history._newest_matches(tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text);
DROP FUNCTION history._listed_rows(bigint[], float8);

COMMIT;
