-- Revert history-search:_key_union from pg
BEGIN;

DROP FUNCTION history._key_union(bigint[], bigint[]);

COMMIT;
