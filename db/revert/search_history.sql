-- Revert history-search:search_history from pg: back to its @v0.5.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/search_history@v0.5.0.sql
