-- Revert history-search:_text_tokens from pg
BEGIN;

DROP FUNCTION history._text_tokens(text);

COMMIT;
