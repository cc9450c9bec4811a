-- Deploy history-search:_tenant_key to pg
-- requires: tenant_accounts
-- The function lives in db/functions/_tenant_key.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_tenant_key.sql

RESET ROLE;
COMMIT;
