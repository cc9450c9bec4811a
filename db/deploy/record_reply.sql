-- Deploy history-search:record_reply to pg
-- The function lives in db/functions/record_reply.sql.
-- Reworked after v0.1.0: The delivery audience counts the members open now (a future join too) and those whose membership covers the reply's sent_at.
-- Reworked after v0.2.0: Tenants: names ids within a tenant (p_tenant, the default tenant when omitted)
-- Reworked after v0.4.0: Finds the run's tenant (run_tokens) and does the work there (_record_reply_in_tenant), one delegated call on Citus
BEGIN;
SET LOCAL ROLE history_owner;

\ir ../functions/record_reply.sql

RESET ROLE;
COMMIT;
