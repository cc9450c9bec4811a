-- Revert history-search:_message_key from pg
BEGIN;

DROP FUNCTION history._message_key(text, text);

COMMIT;
