-- Revert history-search:_outside_windows from pg
BEGIN;
SET LOCAL ROLE history_owner;

DROP FUNCTION history._outside_windows(bigint, timestamptz, bigint[], tstzmultirange[]);

RESET ROLE;
COMMIT;
