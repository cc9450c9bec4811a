-- Revert history-search:search_history from pg: back to its @v0.3.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/search_history@v0.3.0.sql
