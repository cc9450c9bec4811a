-- Revert history-search:audit_view_functions from pg: back to its @v0.6.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/audit_view_functions@v0.6.0.sql
