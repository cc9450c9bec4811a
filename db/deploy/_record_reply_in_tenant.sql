-- Deploy history-search:_record_reply_in_tenant to pg
-- requires: _lock_open_run _delivery_problems _post_message_in_tenant
-- The function lives in db/functions/_record_reply_in_tenant.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_record_reply_in_tenant.sql

RESET ROLE;
COMMIT;
