-- Revert history-search:post_message from pg
BEGIN;

DROP FUNCTION history.post_message(text, text, text, text, timestamptz, text[]);

COMMIT;
