-- Revert history-search:erase_account from pg
BEGIN;

DROP FUNCTION history.erase_account(text, timestamptz);

COMMIT;
