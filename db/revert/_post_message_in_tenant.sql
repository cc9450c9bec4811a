-- Revert history-search:_post_message_in_tenant from pg: back to its @v0.4.0 version
-- (if the signature changed, drop the new function here first).
\ir ../deploy/_post_message_in_tenant@v0.4.0.sql
