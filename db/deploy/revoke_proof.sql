-- Deploy history-search:revoke_proof to pg
-- The function lives in db/functions/revoke_proof.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/revoke_proof.sql

RESET ROLE;
COMMIT;
