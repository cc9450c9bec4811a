-- Deploy history-search:_member_windows to pg
-- The function lives in db/functions/_member_windows.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_member_windows.sql

RESET ROLE;
COMMIT;
