-- Revert history-search:_conversation_key from pg
BEGIN;

DROP FUNCTION history._conversation_key(text, text);

COMMIT;
