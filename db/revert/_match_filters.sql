-- Revert history-search:_match_filters from pg: back to its @v0.3.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/_match_filters@v0.3.0.sql
