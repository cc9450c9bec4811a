-- Revert history-search:_default_audience from pg: back to its @v0.2.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history._default_audience(bigint, bigint, timestamptz, integer);
COMMIT;
\ir ../deploy/_default_audience@v0.2.0.sql
