-- Verify history-search:tenant_accounts on pg
BEGIN;

SELECT tenant_key FROM history.accounts WHERE false;
SELECT tenant_key FROM history.identity_proofs WHERE false;
SELECT tenant_key FROM history.account_erasures WHERE false;
SELECT 'history.conversations_tenant_language_idx'::regclass;
SELECT 1 / (NOT EXISTS (SELECT FROM pg_constraint WHERE conname = 'tenants_built_in_only'))::int;

ROLLBACK;
