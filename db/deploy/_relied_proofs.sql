-- Deploy history-search:_relied_proofs to pg
-- The function lives in db/functions/_relied_proofs.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_relied_proofs.sql

RESET ROLE;
COMMIT;
