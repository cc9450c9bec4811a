-- Revert history-search:_run_scope from pg: back to its @v0.3.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/_run_scope@v0.3.0.sql
