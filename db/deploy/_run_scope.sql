-- Deploy history-search:_run_scope to pg
-- requires: search_stage_types _audience_windows _member_windows tenant_accounts
-- The function lives in db/functions/_run_scope.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_run_scope.sql

RESET ROLE;
COMMIT;
