-- Revert history-search:erase_account from pg: back to its @v0.2.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history.erase_account(text, timestamptz, text);
COMMIT;
\ir ../deploy/erase_account@v0.2.0.sql
