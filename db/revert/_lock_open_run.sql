-- Revert history-search:_lock_open_run from pg: back to its @v0.3.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/_lock_open_run@v0.3.0.sql
