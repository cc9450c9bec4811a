-- Revert history-search:_query_languages from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history._query_languages(integer);
COMMIT;
\ir ../deploy/_query_languages@v0.1.0.sql
