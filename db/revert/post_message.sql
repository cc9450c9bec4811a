-- Revert history-search:post_message from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history.post_message(text, text, text, text, timestamptz, text[], text);
COMMIT;
\ir ../deploy/post_message@v0.1.0.sql
