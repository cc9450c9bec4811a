-- _lineage_blocked: true when some message in p_message's lineage (from the
-- precomputed closure) was sent when the audience could not read it, given
-- the audience's windows already computed by the caller (_audience_windows
-- as two parallel arrays). An empty audience blocks nothing. search_history
-- calls it per candidate without recomputing windows.
-- PL/pgSQL, its one table read naming p_tenant, each ancestor tested by
-- history._outside_windows. It reads a table, so on Citus it is called only
-- by statements on no distributed table: a statement on one (a scan of the
-- projection) writes the same test inline, over history.message_lineage and
-- with _outside_windows (docs/scale-out.md).
DROP FUNCTION IF EXISTS history._lineage_blocked(bigint, bigint[], tstzmultirange[], bigint[]);
CREATE OR REPLACE FUNCTION history._lineage_blocked(
    p_tenant integer, p_message bigint, p_window_conversations bigint[], p_windows tstzmultirange[], p_audience bigint[])
RETURNS boolean
LANGUAGE plpgsql
STABLE
AS $function$
BEGIN
    IF NOT pg_catalog.cardinality(p_audience) > 0 THEN
        RETURN false;
    END IF;
    RETURN EXISTS (
        SELECT 1
          FROM history.message_lineage l
         WHERE l.tenant_key = p_tenant AND l.message_key = p_message
           AND history._outside_windows(l.ancestor_conversation_key, l.ancestor_sent_at, p_window_conversations, p_windows));
END
$function$;

COMMENT ON FUNCTION history._lineage_blocked(integer, bigint, bigint[], tstzmultirange[], bigint[]) IS
    'Internal: is some ancestor of a message outside the given audience windows?';
REVOKE ALL ON FUNCTION history._lineage_blocked(integer, bigint, bigint[], tstzmultirange[], bigint[]) FROM PUBLIC;
