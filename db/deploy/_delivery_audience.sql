-- Deploy history-search:_delivery_audience to pg
-- The function lives in db/functions/_delivery_audience.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_delivery_audience.sql

RESET ROLE;
COMMIT;
