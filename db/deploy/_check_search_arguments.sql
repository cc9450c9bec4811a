-- Deploy history-search:_check_search_arguments to pg
-- requires: schema
-- The function lives in db/functions/_check_search_arguments.sql.
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/_check_search_arguments.sql

RESET ROLE;
COMMIT;
