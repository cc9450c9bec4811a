-- Revert history-search:_recompute_components from pg: back to its @v0.2.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history._recompute_components(bigint[], integer);
COMMIT;
\ir ../deploy/_recompute_components@v0.2.0.sql
