-- Revert history-search:_newest_matches from pg: back to its @v0.3.0 version.
-- The signatures changed (it takes the tenant, _listed_rows the relation): drop
-- the new functions first.
-- SQL-language bodies of the old version may call functions reverted later
-- (in the old signatures): their bodies are checked when they run.
BEGIN;
SET LOCAL ROLE history_owner;
DROP FUNCTION history._listed_rows(bigint[], float8, regclass);  -- it gained p_relation
DROP FUNCTION history._local_shard(regclass, integer);
DROP FUNCTION history._local_shards(regclass[], integer);
DROP FUNCTION history._newest_matches(integer, tsquery, bigint, bigint[], tstzmultirange[], boolean, bigint[], timestamptz, timestamptz, integer, text, bigint[], bigint[], tstzmultirange[], bigint[]);
RESET ROLE;
COMMIT;

SET check_function_bodies = off;
\ir ../deploy/_newest_matches@v0.3.0.sql
RESET check_function_bodies;
