-- Revert history-search:check_delivery from pg: back to its @v0.3.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/check_delivery@v0.3.0.sql
