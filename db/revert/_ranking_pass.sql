-- Revert history-search:_ranking_pass from pg: back to its @v0.4.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/_ranking_pass@v0.4.0.sql
