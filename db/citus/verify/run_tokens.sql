-- Verify history-search:run_tokens on a database Citus already distributes:
-- db/verify/run_tokens.sql (released in 0.4.0) in statements Citus accepts.
-- There the new table is a local table of the coordinator until
-- `history-search distribute` makes it a reference table, and Citus refuses
-- a query joining it to the distributed runs ("direct joins between
-- distributed and local tables are not supported"); it accepts the runs read
-- first, into a materialised CTE.
BEGIN;

SELECT run_token, tenant_key FROM history.run_tokens WHERE false;
SELECT 1 / (NOT pg_catalog.has_table_privilege('public', 'history.run_tokens', 'select'))::int;
-- Every run has its token's row.
WITH expected AS MATERIALIZED (SELECT r.run_token, r.tenant_key FROM history.runs r)
SELECT 1 / (NOT EXISTS (SELECT e.run_token, e.tenant_key FROM expected e
                        EXCEPT SELECT t.run_token, t.tenant_key FROM history.run_tokens t))::int;

ROLLBACK;
