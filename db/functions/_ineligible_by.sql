-- _ineligible_by: eligibility, the rules of who may see what, in their order:
-- the first rule a message fails, or NULL when it is eligible. A message is
-- eligible for a run when
--   1. perspective: it was sent inside the agent's membership intervals
--      (p_agent_visible, the agent's windows in its conversation);
--   2. audience: inside every audience account's (p_audience_visible: the
--      audience's windows there; an empty p_audience restricts nothing);
--   3. lineage: every message in its lineage passes the audience check
--      (history._lineage_blocked, with the audience's windows of every
--      conversation, p_window_conversations and p_windows);
--   4. alive: its latest event is not a deletion (the projection holds live
--      messages only; the search rechecks canonical events when it admits
--      them, under FOR SHARE);
--   5. not in context: not one of p_context (the run's current and loaded
--      messages).
-- Every pass of the search uses it (counting, ranking, neighbours), and
-- _newest_matches applies the same rules inside its scans, before its cap.
-- Plain SQL with no SET clause, so it is inlined into the calling query
-- (p_tenant: the tenant of the message, named in the lineage lookup).
DROP FUNCTION IF EXISTS history._ineligible_by(bigint, timestamptz, boolean, tstzmultirange, tstzmultirange, bigint[], bigint[], tstzmultirange[], bigint[]);
CREATE OR REPLACE FUNCTION history._ineligible_by(
    p_tenant integer, p_message bigint, p_sent_at timestamptz, p_has_lineage boolean,
    p_agent_visible tstzmultirange, p_audience_visible tstzmultirange,
    p_audience bigint[], p_window_conversations bigint[], p_windows tstzmultirange[],
    p_context bigint[])
RETURNS text
LANGUAGE sql
STABLE
AS $function$
    SELECT CASE
        WHEN NOT coalesce(p_sent_at OPERATOR(pg_catalog.<@) p_agent_visible, false) THEN 'perspective'
        WHEN pg_catalog.cardinality(p_audience) > 0
             AND NOT coalesce(p_sent_at OPERATOR(pg_catalog.<@) p_audience_visible, false) THEN 'audience'
        WHEN p_has_lineage
             AND history._lineage_blocked(p_tenant, p_message, p_window_conversations, p_windows, p_audience) THEN 'lineage'
        WHEN p_message OPERATOR(pg_catalog.=) ANY (p_context) THEN 'in_context'
    END
$function$;

COMMENT ON FUNCTION history._ineligible_by(integer, bigint, timestamptz, boolean, tstzmultirange, tstzmultirange, bigint[], bigint[], tstzmultirange[], bigint[]) IS
    'Internal: eligibility: the first rule of who may see what a message fails (perspective, audience, lineage, in_context), NULL when eligible';
REVOKE ALL ON FUNCTION history._ineligible_by(integer, bigint, timestamptz, boolean, tstzmultirange, tstzmultirange, bigint[], bigint[], tstzmultirange[], bigint[]) FROM PUBLIC;
