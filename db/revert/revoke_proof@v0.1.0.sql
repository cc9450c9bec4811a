-- Revert history-search:revoke_proof from pg
BEGIN;

DROP FUNCTION history.revoke_proof(text, timestamptz);

COMMIT;
