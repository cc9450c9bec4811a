-- Deploy history-search:_search_in_tenant to pg
-- The function lives in db/functions/_search_in_tenant.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_search_in_tenant.sql

RESET ROLE;
COMMIT;
