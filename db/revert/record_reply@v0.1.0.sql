-- Revert history-search:record_reply from pg
BEGIN;

DROP FUNCTION history.record_reply(uuid, text, text, timestamptz);

COMMIT;
