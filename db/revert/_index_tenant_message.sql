-- Revert history-search:_index_tenant_message from pg: back to its @v0.3.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/_index_tenant_message@v0.3.0.sql
