-- Revert history-search:_require_time from pg
BEGIN;

DROP FUNCTION history._require_time(text, timestamptz);

COMMIT;
