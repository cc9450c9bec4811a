-- Revert history-search:_search_hits from pg: back to its @v0.4.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/_search_hits@v0.4.0.sql
