-- Revert history-search:_default_audience from pg
BEGIN;

DROP FUNCTION history._default_audience(bigint, bigint, timestamptz);

COMMIT;
