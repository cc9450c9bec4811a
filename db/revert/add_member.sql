-- Revert history-search:add_member from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history.add_member(text, text, timestamptz, text);
COMMIT;
\ir ../deploy/add_member@v0.1.0.sql
