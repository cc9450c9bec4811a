-- Revert history-search:_search_hits from pg: back to its @v0.3.0 version.
-- The signature changed (it takes the tenant): drop the new function first.
-- SQL-language bodies of the old version may call functions reverted later
-- (in the old signatures): their bodies are checked when they run.
BEGIN;
SET LOCAL ROLE history_owner;
DROP FUNCTION history._search_hits(integer, history._admission, history._ranked_candidate[], text[], bigint, bigint[], integer);
RESET ROLE;
COMMIT;

SET check_function_bodies = off;
\ir ../deploy/_search_hits@v0.3.0.sql
RESET check_function_bodies;
