-- Revert history-search:_search_reveal from pg: back to its @v0.2.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/_search_reveal@v0.2.0.sql
