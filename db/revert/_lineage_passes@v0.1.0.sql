-- Revert history-search:_lineage_passes from pg
BEGIN;

DROP FUNCTION history._lineage_passes(bigint, bigint[]);

COMMIT;
