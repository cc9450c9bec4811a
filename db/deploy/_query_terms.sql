-- Deploy history-search:_query_terms to pg
-- The function lives in db/functions/_query_terms.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_query_terms.sql

RESET ROLE;
COMMIT;
