-- Revert history-search:_audience_windows from pg: back to its @v0.1.0 version.
-- The signature changed (it takes the tenant): drop the new function first.
-- SQL-language bodies of the old version may call functions reverted later
-- (in the old signatures): their bodies are checked when they run.
BEGIN;
SET LOCAL ROLE history_owner;
DROP FUNCTION history._audience_windows(integer, bigint[], bigint[]);
RESET ROLE;
COMMIT;

SET check_function_bodies = off;
\ir ../deploy/_audience_windows@v0.1.0.sql
RESET check_function_bodies;
