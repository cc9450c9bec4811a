-- Revert history-search:release from pg: back to its @v0.6.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/release@v0.6.0.sql
