-- Revert history-search:upsert_conversation from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history.upsert_conversation(text, text, text, regconfig, text);
COMMIT;
\ir ../deploy/upsert_conversation@v0.1.0.sql
