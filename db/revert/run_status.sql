-- Revert history-search:run_status from pg: back to its @v0.3.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/run_status@v0.3.0.sql
