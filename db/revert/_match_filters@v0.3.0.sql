-- Revert history-search:_match_filters from pg
BEGIN;

DROP FUNCTION history._match_filters(bigint[], tstzmultirange[], boolean, bigint[], bigint[]);

COMMIT;
