-- Revert history-search:_delivery_audience from pg: back to its @v0.2.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/_delivery_audience@v0.2.0.sql
