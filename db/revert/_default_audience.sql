-- Revert history-search:_default_audience from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/_default_audience@v0.1.0.sql
