-- Revert history-search:delete_message from pg
BEGIN;

DROP FUNCTION history.delete_message(text, timestamptz);

COMMIT;
