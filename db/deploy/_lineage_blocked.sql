-- Deploy history-search:_lineage_blocked to pg
-- The function lives in db/functions/_lineage_blocked.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_lineage_blocked.sql

RESET ROLE;
COMMIT;
