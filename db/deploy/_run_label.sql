-- Deploy history-search:_run_label to pg
-- requires: schema
-- The function lives in db/functions/_run_label.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_run_label.sql

RESET ROLE;
COMMIT;
