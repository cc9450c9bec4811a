-- Revert history-search:edit_message from pg
BEGIN;

DROP FUNCTION history.edit_message(text, text, timestamptz);

COMMIT;
