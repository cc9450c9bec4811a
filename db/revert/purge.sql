-- Revert history-search:purge from pg: back to its @v0.3.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/purge@v0.3.0.sql
