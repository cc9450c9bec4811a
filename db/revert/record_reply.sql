-- Revert history-search:record_reply from pg: back to its @v0.4.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/record_reply@v0.4.0.sql
