-- Revert history-search:_message_json from pg: back to its @v0.1.0 version.
-- The signature changed (it takes the tenant): drop the new function first.
-- SQL-language bodies of the old version may call functions reverted later
-- (in the old signatures): their bodies are checked when they run.
BEGIN;
SET LOCAL ROLE history_owner;
DROP FUNCTION history._message_json(integer, bigint, bigint, bigint[], integer);
DROP FUNCTION history._messages_json(integer, bigint[], bigint, bigint[], integer);
RESET ROLE;
COMMIT;

SET check_function_bodies = off;
\ir ../deploy/_message_json@v0.1.0.sql
RESET check_function_bodies;
