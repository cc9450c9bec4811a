-- Revert history-search:upsert_conversation from pg
BEGIN;

DROP FUNCTION history.upsert_conversation(text, text, text, regconfig);

COMMIT;
