-- Revert history-search:_reveal_in_tenant from pg: back to its @v0.5.0 version
-- (without p_defer: this signature goes first).
BEGIN;
SET LOCAL ROLE history_owner;
DROP FUNCTION history._reveal_in_tenant(integer, uuid, uuid, text, boolean);
RESET ROLE;
COMMIT;

\ir ../deploy/_reveal_in_tenant@v0.5.0.sql
