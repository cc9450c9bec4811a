-- Deploy history-search:_reveal_in_tenant to pg
-- The function lives in db/functions/_reveal_in_tenant.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_reveal_in_tenant.sql

RESET ROLE;
COMMIT;
