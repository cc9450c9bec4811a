-- Deploy history-search:_query_languages to pg
-- The function lives in db/functions/_query_languages.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_query_languages.sql

RESET ROLE;
COMMIT;
