-- _lineage_passes: true when every message in p_message's lineage
-- (transitively, from the precomputed closure) could be read by every
-- account of p_audience when it was sent. An empty audience always passes.
CREATE OR REPLACE FUNCTION history._lineage_passes(p_message bigint, p_audience bigint[])
RETURNS boolean
LANGUAGE sql
STABLE
AS $function$
    SELECT pg_catalog.cardinality(p_audience) = 0 OR NOT EXISTS (
        SELECT 1
          FROM history.message_lineage l
          LEFT JOIN history._audience_windows(
                    p_audience,
                    ARRAY(SELECT DISTINCT l2.ancestor_conversation_key
                            FROM history.message_lineage l2 WHERE l2.message_key = p_message)) w
                 ON w.conversation_key = l.ancestor_conversation_key
         WHERE l.message_key = p_message
           AND NOT coalesce(l.ancestor_sent_at OPERATOR(pg_catalog.<@) w.visible, false))
$function$;

COMMENT ON FUNCTION history._lineage_passes(bigint, bigint[]) IS
    'Internal: does every ancestor of a message pass the audience check?';
REVOKE ALL ON FUNCTION history._lineage_passes(bigint, bigint[]) FROM PUBLIC;
