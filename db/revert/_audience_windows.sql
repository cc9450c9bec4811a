-- Revert history-search:_audience_windows from pg: back to its @v0.5.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/_audience_windows@v0.5.0.sql
