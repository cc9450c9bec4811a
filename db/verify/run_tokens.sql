-- Verify history-search:run_tokens on pg
BEGIN;

SELECT run_token, tenant_key FROM history.run_tokens WHERE false;
SELECT 1 / (NOT pg_catalog.has_table_privilege('public', 'history.run_tokens', 'select'))::int;
-- Every run has its token's row.
SELECT 1 / (NOT EXISTS (SELECT FROM history.runs r
                         WHERE NOT EXISTS (SELECT FROM history.run_tokens t
                                            WHERE t.run_token = r.run_token AND t.tenant_key = r.tenant_key)))::int;

ROLLBACK;
