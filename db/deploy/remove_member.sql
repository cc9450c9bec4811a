-- Deploy history-search:remove_member to pg
-- The function lives in db/functions/remove_member.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/remove_member.sql

RESET ROLE;
COMMIT;
