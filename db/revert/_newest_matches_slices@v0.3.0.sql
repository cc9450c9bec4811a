-- Revert history-search:_newest_matches_slices from pg
BEGIN;

DROP FUNCTION history._newest_matches_slices(tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text, float8, float8, float8, timestamptz, timestamptz, bigint[], bigint[], tstzmultirange[], bigint[]);

COMMIT;
