-- Revert history-search:delete_message from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history.delete_message(text, timestamptz, text);
COMMIT;
\ir ../deploy/delete_message@v0.1.0.sql
