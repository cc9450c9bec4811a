-- Revert history-search:_message_key from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history._message_key(text, text, integer);
COMMIT;
\ir ../deploy/_message_key@v0.1.0.sql
