-- Revert history-search:release from pg: back to its @v0.5.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/release@v0.5.0.sql
