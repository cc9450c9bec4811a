-- Revert history-search:revoke_proof from pg: back to its @v0.1.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history.revoke_proof(text, timestamptz, text);
COMMIT;
\ir ../deploy/revoke_proof@v0.1.0.sql
