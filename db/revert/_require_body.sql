-- Revert history-search:_require_body from pg
BEGIN;

DROP FUNCTION history._require_body(text, text);

COMMIT;
