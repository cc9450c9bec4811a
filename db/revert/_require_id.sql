-- Revert history-search:_require_id from pg
BEGIN;

DROP FUNCTION history._require_id(text, text);

COMMIT;
