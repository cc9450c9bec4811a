-- Deploy history-search:_query_tsquery to pg
-- The function lives in db/functions/_query_tsquery.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_query_tsquery.sql

RESET ROLE;
COMMIT;
