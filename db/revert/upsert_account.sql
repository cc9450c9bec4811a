-- Revert history-search:upsert_account from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history.upsert_account(text, text, text, text);
COMMIT;
\ir ../deploy/upsert_account@v0.1.0.sql
