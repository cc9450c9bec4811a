-- Deploy history-search:_query_lexemes to pg
-- The function lives in db/functions/_query_lexemes.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_query_lexemes.sql

RESET ROLE;
COMMIT;
