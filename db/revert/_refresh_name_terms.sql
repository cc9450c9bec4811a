-- Revert history-search:_refresh_name_terms from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history._refresh_name_terms(bigint[], boolean, integer);
COMMIT;
\ir ../deploy/_refresh_name_terms@v0.1.0.sql
