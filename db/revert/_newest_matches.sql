-- Revert history-search:_newest_matches from pg: back to its @v0.3.0 version.
-- The signature changed (it takes the tenant): drop the new function first.
-- SQL-language bodies of the old version may call functions reverted later
-- (in the old signatures): their bodies are checked when they run.
BEGIN;
SET LOCAL ROLE history_owner;
DROP FUNCTION history._newest_matches(integer, tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text, bigint[], bigint[], tstzmultirange[], bigint[]);
RESET ROLE;
COMMIT;

SET check_function_bodies = off;
\ir ../deploy/_newest_matches@v0.3.0.sql
RESET check_function_bodies;
