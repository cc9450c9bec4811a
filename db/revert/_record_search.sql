-- Revert history-search:_record_search from pg: back to its @v0.4.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/_record_search@v0.4.0.sql
