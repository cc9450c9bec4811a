-- Deploy history-search:_query_names to pg
-- requires: tenant_accounts _query_terms
-- The function lives in db/functions/_query_names.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_query_names.sql

RESET ROLE;
COMMIT;
