-- Revert history-search:purge from pg: back to its @v0.2.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/purge@v0.2.0.sql
