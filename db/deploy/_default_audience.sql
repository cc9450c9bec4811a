-- Deploy history-search:_default_audience to pg
-- The function lives in db/functions/_default_audience.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_default_audience.sql

RESET ROLE;
COMMIT;
