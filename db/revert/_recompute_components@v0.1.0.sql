-- Revert history-search:_recompute_components from pg
BEGIN;

DROP FUNCTION history._recompute_components(bigint[]);

COMMIT;
