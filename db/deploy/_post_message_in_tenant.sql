-- Deploy history-search:_post_message_in_tenant to pg
-- The function lives in db/functions/_post_message_in_tenant.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_post_message_in_tenant.sql

RESET ROLE;
COMMIT;
