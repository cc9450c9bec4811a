-- Revert history-search:_require_alive from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/_require_alive@v0.1.0.sql
