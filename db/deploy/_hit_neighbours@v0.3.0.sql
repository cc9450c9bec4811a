-- Deploy history-search:_hit_neighbours to pg
-- requires: search_stage_types _ineligible_by
-- The function lives in db/functions/_hit_neighbours.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _hit_neighbours: the search's neighbours stage. For each ranked hit (in
-- order), up to two eligible messages each side of it in its conversation,
-- nearest first by (sent_at, message_id), searched only inside the hit's
-- eligible windows (its visible multirange) so a long ineligible stretch
-- costs one index probe per window. Eligible as hits are
-- (history._ineligible_by: lineage readable by p_audience, whose windows are
-- p_window_conversations and p_windows; not in p_context); the speaker and
-- time filters do not apply to neighbours.
CREATE OR REPLACE FUNCTION history._hit_neighbours(
    p_ranked history._ranked_candidate[], p_audience bigint[],
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
                       WHERE d.conversation_key = h.conversation_key
                         AND d.sent_at >= lower(w)
                         -- before the hit and before the window's end, as one
                         -- bound the index scan starts from ('' sorts first)
                         AND (d.sent_at, d.message_id)
                             < (least(h.sent_at, upper(w)),
                                CASE WHEN upper(w) <= h.sent_at THEN '' ELSE h.message_id END COLLATE "C")
                         AND history._ineligible_by(d.message_key, d.sent_at, d.has_lineage, h.visible, h.visible,
                                                    p_audience, p_window_conversations, p_windows, p_context) IS NULL
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
                       WHERE d.conversation_key = h.conversation_key
                         AND (upper_inf(w) OR d.sent_at < upper(w))
                         -- after the hit and from the window's start (ids are
                         -- never empty, so > '' admits every id at that time)
                         AND (d.sent_at, d.message_id)
                             > (greatest(h.sent_at, lower(w)),
                                CASE WHEN lower(w) > h.sent_at THEN '' ELSE h.message_id END COLLATE "C")
                         AND history._ineligible_by(d.message_key, d.sent_at, d.has_lineage, h.visible, h.visible,
                                                    p_audience, p_window_conversations, p_windows, p_context) IS NULL
                       ORDER BY d.sent_at, d.message_id
                       LIMIT 2) d
                  WHERE upper_inf(w) OR upper(w) > h.sent_at
                  ORDER BY d.sent_at, d.message_id
                  LIMIT 2) n) AS k) a
         ORDER BY h.ordinality);
END
$function$;

COMMENT ON FUNCTION history._hit_neighbours(history._ranked_candidate[], bigint[], bigint[], tstzmultirange[], bigint[]) IS
    'Internal: the search''s neighbours stage: up to two eligible messages each side of each hit, nearest first';
REVOKE ALL ON FUNCTION history._hit_neighbours(history._ranked_candidate[], bigint[], bigint[], tstzmultirange[], bigint[]) FROM PUBLIC;

RESET ROLE;
COMMIT;
