-- Revert history-search:edit_message from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history.edit_message(text, text, timestamptz, text);
COMMIT;
\ir ../deploy/edit_message@v0.1.0.sql
