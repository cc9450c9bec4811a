-- Revert history-search:remove_member from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history.remove_member(text, text, timestamptz, text);
COMMIT;
\ir ../deploy/remove_member@v0.1.0.sql
