-- Revert history-search:link_identity from pg: back to its @v0.2.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history.link_identity(text, text, text, timestamptz, text);
COMMIT;
\ir ../deploy/link_identity@v0.2.0.sql
