-- Revert history-search:_delivery_audience from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history._delivery_audience(history.runs, timestamptz);
COMMIT;
\ir ../deploy/_delivery_audience@v0.1.0.sql
