-- Revert history-search:_search_reveal from pg: back to its @v0.3.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/_search_reveal@v0.3.0.sql
