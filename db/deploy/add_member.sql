-- Deploy history-search:add_member to pg
-- The function lives in db/functions/add_member.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/add_member.sql

RESET ROLE;
COMMIT;
