-- Revert history-search:_search_reveal from pg: back to its @v0.5.0 version
-- (without p_defer: this signature goes first).
BEGIN;
SET LOCAL ROLE history_owner;
DROP FUNCTION history._search_reveal(uuid, uuid, text, boolean);
RESET ROLE;
COMMIT;

\ir ../deploy/_search_reveal@v0.5.0.sql
