-- Revert history-search:_newest_matches from pg: back to its @v0.1.0 version
-- (the signature changed: the new function goes first).
BEGIN;
SET LOCAL ROLE history_owner;
DROP FUNCTION history._newest_matches(tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text, bigint[], bigint[], tstzmultirange[], bigint[]);
RESET ROLE;
COMMIT;
\ir ../deploy/_newest_matches@v0.1.0.sql
