-- Revert history-search:_delivery_problems from pg: back to its @v0.3.0 version.
-- That version's deploy begins by dropping 0.2.0's three-argument function,
-- which is long gone here: give it one to drop, then run it as released.
BEGIN;
SET LOCAL ROLE history_owner;
CREATE FUNCTION history._delivery_problems(bigint, bigint, bigint[]) RETURNS void LANGUAGE sql AS 'SELECT NULL::void';
RESET ROLE;
COMMIT;

-- Deploy history-search:_delivery_problems to pg
-- The function lives in db/functions/_delivery_problems.sql.
-- Reworked after v0.2.0: Citus: every statement names the tenant (tenant_key, the distribution column), so each runs on one shard
BEGIN;
SET LOCAL ROLE history_owner;

-- The signature gained the tenant: no overload of the old one may remain.
DROP FUNCTION history._delivery_problems(bigint, bigint, bigint[]);

-- _delivery_problems: the run's evidence that would not pass now, with the
-- first reason each fails, in this order: deleted, perspective,
-- proof_revoked (a proof the search relied on is revoked), audience, lineage.
-- p_audience is the audience as of now (explicit, or recomputed default).
-- One evidence row at a time, each check a statement naming the run's tenant
-- (on Citus a single-shard one; a run holds at most a few hundred rows).
CREATE OR REPLACE FUNCTION history._delivery_problems(p_run bigint, p_agent bigint, p_audience bigint[],
                                                      p_tenant_key integer)
RETURNS TABLE (message_id text, reason text)
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    r record;
BEGIN
    FOR r IN
        SELECT m.message_key, m.message_id AS id, m.conversation_key, m.sent_at, e.event_kind, ev.proof_keys
          FROM history.run_evidence ev
          JOIN history.messages m ON m.message_key = ev.message_key AND m.tenant_key = p_tenant_key
          JOIN history.message_events e ON e.event_key = m.current_event_key AND e.tenant_key = p_tenant_key
         WHERE ev.run_key = p_run AND ev.tenant_key = p_tenant_key
         ORDER BY m.message_id
    LOOP
        reason := NULL;
        IF r.event_kind = 'deleted' THEN
            reason := 'deleted';
        ELSIF NOT EXISTS (SELECT 1 FROM history.memberships ms
                           WHERE ms.conversation_key = r.conversation_key AND ms.tenant_key = p_tenant_key
                             AND ms.account_key = p_agent
                             AND ms.since <= r.sent_at AND (ms.until IS NULL OR ms.until > r.sent_at)) THEN
            reason := 'perspective';
        ELSIF EXISTS (SELECT 1 FROM history.identity_proofs p
                       WHERE p.proof_key = ANY (r.proof_keys) AND p.tenant_key = p_tenant_key
                         AND p.revoked_at IS NOT NULL) THEN
            reason := 'proof_revoked';
        ELSIF pg_catalog.cardinality(p_audience) > 0
              AND NOT coalesce((SELECT r.sent_at OPERATOR(pg_catalog.<@) w.visible
                                  FROM history._audience_windows(p_audience, ARRAY[r.conversation_key]) w), false) THEN
            reason := 'audience';
        ELSIF NOT history._lineage_passes(r.message_key, p_audience) THEN
            reason := 'lineage';
        END IF;
        IF reason IS NOT NULL THEN
            message_id := r.id;
            RETURN NEXT;
        END IF;
    END LOOP;
END
$function$;

COMMENT ON FUNCTION history._delivery_problems(bigint, bigint, bigint[], integer) IS
    'Internal: evidence of a run that no longer passes, with the reason';
REVOKE ALL ON FUNCTION history._delivery_problems(bigint, bigint, bigint[], integer) FROM PUBLIC;

RESET ROLE;
COMMIT;
