-- Deploy history-search:_text_tokens to pg
-- The function lives in db/functions/_text_tokens.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_text_tokens.sql

RESET ROLE;
COMMIT;
