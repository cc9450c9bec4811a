-- Revert history-search:_lineage_blocked from pg
BEGIN;

DROP FUNCTION history._lineage_blocked(bigint, bigint[], tstzmultirange[], bigint[]);

COMMIT;
