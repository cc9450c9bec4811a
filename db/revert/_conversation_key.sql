-- Revert history-search:_conversation_key from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history._conversation_key(text, text, integer);
COMMIT;
\ir ../deploy/_conversation_key@v0.1.0.sql
