-- Revert history-search:_visible_languages from pg: back to its @v0.2.0 version.
-- The signature changed (it takes the tenant): drop the new function first.
-- SQL-language bodies of the old version may call functions reverted later
-- (in the old signatures): their bodies are checked when they run.
BEGIN;
SET LOCAL ROLE history_owner;
DROP FUNCTION history._visible_languages(integer, bigint, bigint[], bigint);
RESET ROLE;
COMMIT;

SET check_function_bodies = off;
\ir ../deploy/_visible_languages@v0.2.0.sql
RESET check_function_bodies;
