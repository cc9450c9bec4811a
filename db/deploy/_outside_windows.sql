-- Deploy history-search:_outside_windows to pg
-- requires: schema
-- The function lives in db/functions/_outside_windows.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_outside_windows.sql

RESET ROLE;
COMMIT;
