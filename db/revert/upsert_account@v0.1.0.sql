-- Revert history-search:upsert_account from pg
BEGIN;

DROP FUNCTION history.upsert_account(text, text, text);

COMMIT;
