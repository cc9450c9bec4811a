-- Deploy history-search:upsert_conversation to pg
-- The function lives in db/functions/upsert_conversation.sql.
-- Reworked after v0.2.0: Tenants: names ids within a tenant (p_tenant, the default tenant when omitted)
BEGIN;
SET LOCAL ROLE history_owner;

-- The signature gained p_tenant: no overload of the old one may remain.
DROP FUNCTION history.upsert_conversation(text, text, text, regconfig);

\ir ../functions/upsert_conversation.sql

RESET ROLE;
COMMIT;
