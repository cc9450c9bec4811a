-- Revert history-search:_account_key from pg
BEGIN;

DROP FUNCTION history._account_key(text, text);

COMMIT;
