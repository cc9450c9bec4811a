-- Deploy history-search:_audience_windows to pg
-- The function lives in db/functions/_audience_windows.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_audience_windows.sql

RESET ROLE;
COMMIT;
