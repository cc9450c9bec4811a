-- Revert history-search:_counting_pass from pg: back to its @v0.3.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/_counting_pass@v0.3.0.sql
