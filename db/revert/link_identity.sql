-- Revert history-search:link_identity from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/link_identity@v0.1.0.sql
