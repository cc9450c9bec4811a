-- _hit_neighbours: the search's neighbours stage. For each ranked hit (in
-- order), up to two eligible messages each side of it in its conversation,
-- nearest first by (sent_at, message_id), searched only inside the hit's
-- eligible windows (its visible multirange) so a long ineligible stretch
-- costs one index probe per window. Eligible as hits are: inside h.visible
-- perspective and audience hold, so of history._ineligible_by's rules only
-- lineage (readable by p_audience, whose windows are p_window_conversations
-- and p_windows) and context (not in p_context) can fail, and they are
-- tested in the statement itself (history._lineage_blocked's test, inline:
-- on Citus a statement on a distributed table may call no function that
-- reads one). The speaker and time filters do not apply to neighbours.
DROP FUNCTION IF EXISTS history._hit_neighbours(history._ranked_candidate[], bigint[], bigint[], tstzmultirange[], bigint[]);
CREATE OR REPLACE FUNCTION history._hit_neighbours(
    p_tenant integer, p_ranked history._ranked_candidate[], p_audience bigint[],
    p_window_conversations bigint[], p_windows tstzmultirange[], p_context bigint[])
RETURNS history._hit_neighbours[]
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
BEGIN
    RETURN ARRAY(
        SELECT ROW(b.k, a.k)::history._hit_neighbours
          FROM unnest(p_ranked) WITH ORDINALITY h
         CROSS JOIN LATERAL (
             SELECT ARRAY(SELECT n.message_key FROM (
                 SELECT d.message_key, d.sent_at, d.message_id
                   FROM unnest(h.visible) w
                  CROSS JOIN LATERAL (
                      SELECT d.message_key, d.sent_at, d.message_id
                        FROM history.message_search_documents d
                       WHERE d.tenant_key = p_tenant AND d.conversation_key = h.conversation_key
                         AND d.sent_at >= lower(w)
                         -- before the hit and before the window's end, as one
                         -- bound the index scan starts from ('' sorts first)
                         AND (d.sent_at, d.message_id)
                             < (least(h.sent_at, upper(w)),
                                CASE WHEN upper(w) <= h.sent_at THEN '' ELSE h.message_id END COLLATE "C")
                         -- eligible: inside h.visible only lineage and context can fail
                         AND coalesce(d.message_key <> ALL (p_context), true)
                         AND NOT (d.has_lineage AND coalesce(cardinality(p_audience), 0) > 0 AND EXISTS (
                                 SELECT 1 FROM history.message_lineage l
                                  WHERE l.tenant_key = p_tenant AND l.message_key = d.message_key
                                    AND history._outside_windows(l.ancestor_conversation_key, l.ancestor_sent_at,
                                                                 p_window_conversations, p_windows)))
                       ORDER BY d.sent_at DESC, d.message_id DESC
                       LIMIT 2) d
                  WHERE lower(w) <= h.sent_at
                  ORDER BY d.sent_at DESC, d.message_id DESC
                  LIMIT 2) n) AS k) b
         CROSS JOIN LATERAL (
             SELECT ARRAY(SELECT n.message_key FROM (
                 SELECT d.message_key, d.sent_at, d.message_id
                   FROM unnest(h.visible) w
                  CROSS JOIN LATERAL (
                      SELECT d.message_key, d.sent_at, d.message_id
                        FROM history.message_search_documents d
                       WHERE d.tenant_key = p_tenant AND d.conversation_key = h.conversation_key
                         AND (upper_inf(w) OR d.sent_at < upper(w))
                         -- after the hit and from the window's start (ids are
                         -- never empty, so > '' admits every id at that time)
                         AND (d.sent_at, d.message_id)
                             > (greatest(h.sent_at, lower(w)),
                                CASE WHEN lower(w) > h.sent_at THEN '' ELSE h.message_id END COLLATE "C")
                         -- eligible: inside h.visible only lineage and context can fail
                         AND coalesce(d.message_key <> ALL (p_context), true)
                         AND NOT (d.has_lineage AND coalesce(cardinality(p_audience), 0) > 0 AND EXISTS (
                                 SELECT 1 FROM history.message_lineage l
                                  WHERE l.tenant_key = p_tenant AND l.message_key = d.message_key
                                    AND history._outside_windows(l.ancestor_conversation_key, l.ancestor_sent_at,
                                                                 p_window_conversations, p_windows)))
                       ORDER BY d.sent_at, d.message_id
                       LIMIT 2) d
                  WHERE upper_inf(w) OR upper(w) > h.sent_at
                  ORDER BY d.sent_at, d.message_id
                  LIMIT 2) n) AS k) a
         ORDER BY h.ordinality);
END
$function$;

COMMENT ON FUNCTION history._hit_neighbours(integer, history._ranked_candidate[], bigint[], bigint[], tstzmultirange[], bigint[]) IS
    'Internal: the search''s neighbours stage: up to two eligible messages each side of each hit, nearest first';
REVOKE ALL ON FUNCTION history._hit_neighbours(integer, history._ranked_candidate[], bigint[], bigint[], tstzmultirange[], bigint[]) FROM PUBLIC;
