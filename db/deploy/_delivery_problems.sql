-- Deploy history-search:_delivery_problems to pg
-- The function lives in db/functions/_delivery_problems.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_delivery_problems.sql

RESET ROLE;
COMMIT;
