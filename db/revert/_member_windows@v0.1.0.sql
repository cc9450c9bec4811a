-- Revert history-search:_member_windows from pg
BEGIN;

DROP FUNCTION history._member_windows(bigint, bigint[]);

COMMIT;
