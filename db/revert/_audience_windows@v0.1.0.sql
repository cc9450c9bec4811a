-- Revert history-search:_audience_windows from pg
BEGIN;

DROP FUNCTION history._audience_windows(bigint[], bigint[]);

COMMIT;
