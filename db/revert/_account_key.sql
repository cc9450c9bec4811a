-- Revert history-search:_account_key from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history._account_key(text, text, integer);
COMMIT;
\ir ../deploy/_account_key@v0.1.0.sql
