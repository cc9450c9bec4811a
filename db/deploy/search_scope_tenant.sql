-- Deploy history-search:search_scope_tenant to pg
-- requires: search_stage_types
-- The search's scope (history._search_scope) carries the run's tenant, so
-- every stage that takes it names the tenant in each statement: on Citus each
-- then runs on the tenant's shard (docs/scale-out.md).
BEGIN;
SET LOCAL ROLE history_owner;

ALTER TYPE history._search_scope ADD ATTRIBUTE tenant_key integer;  -- the run's tenant

RESET ROLE;
COMMIT;
