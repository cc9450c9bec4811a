-- Revert history-search:_delivery_problems from pg: back to its @v0.2.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history._delivery_problems(bigint, bigint, bigint[], integer);
COMMIT;
\ir ../deploy/_delivery_problems@v0.1.0.sql
