-- Deploy history-search:_index_tenant_message to pg
-- The function lives in db/functions/_index_tenant_message.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_index_tenant_message.sql

RESET ROLE;
COMMIT;
