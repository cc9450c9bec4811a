-- Revert history-search:_require_alive from pg: back to its @v0.2.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history._require_alive(bigint, text, integer);
COMMIT;
\ir ../deploy/_require_alive@v0.2.0.sql
