-- _delivery_problems: the run's evidence that would not pass now, with the
-- first reason each fails, in this order: deleted, perspective,
-- proof_revoked (a proof the search relied on is revoked), audience, lineage.
-- p_audience is the audience as of now (explicit, or recomputed default).
-- Set-based, whatever the evidence's size (up to 400 rows): the evidence with
-- its first three checks, its lineage, and the audience's windows in every
-- conversation those look at are three statements naming the run's tenant
-- (on Citus each runs on the tenant's shards); the audience and lineage
-- tests are then pure (history._outside_windows, the lineage rule's test).
CREATE OR REPLACE FUNCTION history._delivery_problems(p_run bigint, p_agent bigint, p_audience bigint[],
                                                      p_tenant_key integer)
RETURNS TABLE (message_id text, reason text)
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    -- the evidence, in message id order (parallel arrays)
    v_keys          bigint[];
    v_ids           text[];
    v_conversations bigint[];
    v_sent          timestamptz[];
    v_reasons       text[];
    -- the evidence's lineage: one row per (message, ancestor)
    v_lineage_of            bigint[];
    v_ancestor_conversations bigint[];
    v_ancestor_times        timestamptz[];
    -- the audience's windows in those conversations
    v_window_conversations bigint[];
    v_windows              tstzmultirange[];
BEGIN
    SELECT coalesce(array_agg(x.message_key ORDER BY x.message_id), '{}'), array_agg(x.message_id ORDER BY x.message_id),
           array_agg(x.conversation_key ORDER BY x.message_id), array_agg(x.sent_at ORDER BY x.message_id),
           array_agg(x.reason ORDER BY x.message_id)
      INTO v_keys, v_ids, v_conversations, v_sent, v_reasons
      FROM (SELECT m.message_key, m.message_id, m.conversation_key, m.sent_at,
                   CASE WHEN e.event_kind = 'deleted' THEN 'deleted'
                        WHEN NOT EXISTS (SELECT 1 FROM history.memberships ms
                                          WHERE ms.conversation_key = m.conversation_key AND ms.tenant_key = p_tenant_key
                                            AND ms.account_key = p_agent
                                            AND ms.since <= m.sent_at AND (ms.until IS NULL OR ms.until > m.sent_at))
                             THEN 'perspective'
                        WHEN EXISTS (SELECT 1 FROM history.identity_proofs p
                                      WHERE p.proof_key = ANY (ev.proof_keys) AND p.tenant_key = p_tenant_key
                                        AND p.revoked_at IS NOT NULL)
                             THEN 'proof_revoked'
                   END AS reason
              FROM history.run_evidence ev
              JOIN history.messages m ON m.message_key = ev.message_key AND m.tenant_key = p_tenant_key
              JOIN history.message_events e ON e.event_key = m.current_event_key AND e.tenant_key = p_tenant_key
             WHERE ev.run_key = p_run AND ev.tenant_key = p_tenant_key) x;

    IF pg_catalog.cardinality(p_audience) > 0 THEN
        SELECT coalesce(array_agg(l.message_key), '{}'), coalesce(array_agg(l.ancestor_conversation_key), '{}'),
               coalesce(array_agg(l.ancestor_sent_at), '{}')
          INTO v_lineage_of, v_ancestor_conversations, v_ancestor_times
          FROM history.message_lineage l
         WHERE l.message_key = ANY (v_keys) AND l.tenant_key = p_tenant_key;
        -- (functions only: on Citus a statement may not both call a function that reads the tables and read them)
        SELECT coalesce(array_agg(w.conversation_key), '{}'), coalesce(array_agg(w.visible), '{}')
          INTO v_window_conversations, v_windows
          FROM history._audience_windows(p_tenant_key, p_audience,
                                         ARRAY(SELECT DISTINCT c FROM unnest(v_conversations || v_ancestor_conversations) c)) w;
        v_reasons := ARRAY(
            SELECT coalesce(r.reason,
                            CASE WHEN history._outside_windows(r.conversation_key, r.sent_at, v_window_conversations, v_windows)
                                      THEN 'audience'
                                 WHEN EXISTS (SELECT 1 FROM unnest(v_lineage_of, v_ancestor_conversations, v_ancestor_times)
                                                            l(message_key, conversation_key, sent_at)
                                               WHERE l.message_key = r.message_key
                                                 AND history._outside_windows(l.conversation_key, l.sent_at,
                                                                              v_window_conversations, v_windows))
                                      THEN 'lineage'
                            END)
              FROM unnest(v_keys, v_conversations, v_sent, v_reasons) WITH ORDINALITY
                   r(message_key, conversation_key, sent_at, reason, o)
             ORDER BY r.o);
    END IF;

    RETURN QUERY
    SELECT r.message_id, r.reason
      FROM unnest(v_ids, v_reasons) WITH ORDINALITY r(message_id, reason, o)
     WHERE r.reason IS NOT NULL
     ORDER BY r.o;
END
$function$;

COMMENT ON FUNCTION history._delivery_problems(bigint, bigint, bigint[], integer) IS
    'Internal: evidence of a run that no longer passes, with the reason';
REVOKE ALL ON FUNCTION history._delivery_problems(bigint, bigint, bigint[], integer) FROM PUBLIC;
