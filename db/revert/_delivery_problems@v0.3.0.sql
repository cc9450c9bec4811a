-- Revert history-search:_delivery_problems from pg: back to its @v0.2.0 version
-- (if the signature changed, drop the new function here first).
BEGIN;
DROP FUNCTION history._delivery_problems(bigint, bigint, bigint[], integer);
COMMIT;
-- Deploy history-search:_delivery_problems to pg
-- The function lives in db/functions/_delivery_problems.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _delivery_problems: the run's evidence that would not pass now, with the
-- first reason each fails, in this order: deleted, perspective,
-- proof_revoked (a proof the search relied on is revoked), audience, lineage.
-- p_audience is the audience as of now (explicit, or recomputed default).
CREATE OR REPLACE FUNCTION history._delivery_problems(p_run bigint, p_agent bigint, p_audience bigint[])
RETURNS TABLE (message_id text, reason text)
LANGUAGE sql
STABLE
AS $function$
    SELECT x.message_id, x.reason
      FROM (SELECT m.message_id,
                   CASE
                     WHEN e.event_kind = 'deleted' THEN 'deleted'
                     WHEN NOT EXISTS (SELECT 1 FROM history.memberships ms
                                       WHERE ms.conversation_key = m.conversation_key AND ms.account_key = p_agent
                                         AND ms.since <= m.sent_at AND (ms.until IS NULL OR ms.until > m.sent_at))
                       THEN 'perspective'
                     WHEN EXISTS (SELECT 1 FROM history.identity_proofs p
                                   WHERE p.proof_key = ANY (ev.proof_keys) AND p.revoked_at IS NOT NULL)
                       THEN 'proof_revoked'
                     WHEN pg_catalog.cardinality(p_audience) > 0
                          AND NOT coalesce((SELECT m.sent_at OPERATOR(pg_catalog.<@) w.visible
                                              FROM history._audience_windows(p_audience, ARRAY[m.conversation_key]) w), false)
                       THEN 'audience'
                     WHEN NOT history._lineage_passes(m.message_key, p_audience) THEN 'lineage'
                   END AS reason
              FROM history.run_evidence ev
              JOIN history.messages m ON m.message_key = ev.message_key
              JOIN history.message_events e ON e.event_key = m.current_event_key
             WHERE ev.run_key = p_run) x
     WHERE x.reason IS NOT NULL
     ORDER BY x.message_id
$function$;

COMMENT ON FUNCTION history._delivery_problems(bigint, bigint, bigint[]) IS
    'Internal: evidence of a run that no longer passes, with the reason';
REVOKE ALL ON FUNCTION history._delivery_problems(bigint, bigint, bigint[]) FROM PUBLIC;

RESET ROLE;
COMMIT;
