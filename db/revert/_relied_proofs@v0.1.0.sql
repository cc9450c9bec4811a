-- Revert history-search:_relied_proofs from pg
BEGIN;

DROP FUNCTION history._relied_proofs(bigint, bigint[], bigint);

COMMIT;
