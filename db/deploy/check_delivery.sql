-- Deploy history-search:check_delivery to pg
-- The function lives in db/functions/check_delivery.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/check_delivery.sql

RESET ROLE;
COMMIT;
