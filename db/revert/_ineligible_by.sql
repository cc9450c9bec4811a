-- Revert history-search:_ineligible_by from pg: back to its @v0.3.0 version.
-- The signature changed (it takes the tenant): drop the new function first.
-- SQL-language bodies of the old version may call functions reverted later
-- (in the old signatures): their bodies are checked when they run.
BEGIN;
SET LOCAL ROLE history_owner;
DROP FUNCTION history._ineligible_by(integer, bigint, timestamptz, boolean, tstzmultirange, tstzmultirange, bigint[], bigint[], tstzmultirange[], bigint[]);
RESET ROLE;
COMMIT;

SET check_function_bodies = off;
\ir ../deploy/_ineligible_by@v0.3.0.sql
RESET check_function_bodies;
