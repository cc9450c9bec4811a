-- _match_filters: the filters of history._newest_matches' dynamic plans, as
-- SQL over $1 .. $8 (query, agent, conversations, windows, authors, after,
-- before, count), $12 .. $15 (exclude, audience, its conversations and
-- windows) and $16 (the tenant, named in every table read: on Citus the
-- statement goes to the tenant's shard): list_test tests the listed conversations, other_filters the
-- agent's membership, the windows, author, time and the eligibility rules
-- (context; lineage when there is an audience: history._lineage_blocked's
-- test written into the statement, which on Citus may call no function that
-- reads a distributed table). One text per case, not a
-- CASE: a membership test under a CASE or an OR stays a subplan that hashes
-- all the agent's memberships (250 000 rows, 300 ms, for the
-- everything-agent at 10M) instead of becoming a semi-join.
--
-- A list of at most 250 conversations is tested inside the text index (its
-- conversation column), so the text and slice plans fetch only the listed
-- conversations' matches. For a longer list the index's work per listed
-- conversation outweighs that (it merges their postings), and the list is a
-- filter (or the conversations' index, ANDed). Not both: ANDing the
-- conversations' index with a short list's text-index scan reads all their rows.
CREATE OR REPLACE FUNCTION history._match_filters(
    p_conversations bigint[], p_windows tstzmultirange[], p_member_windows boolean,
    p_exclude bigint[], p_audience bigint[], OUT list_test text, OUT other_filters text)
LANGUAGE sql
IMMUTABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
    SELECT CASE WHEN pg_catalog.cardinality(p_conversations) <= 250 THEN '
               AND ARRAY[d.conversation_key] OPERATOR(pg_catalog.&&) $3'
                WHEN p_conversations IS NOT NULL THEN '
               AND d.conversation_key = ANY ($3)' ELSE '' END,
           '
               AND d.tenant_key = $16'
        || CASE WHEN p_conversations IS NULL OR p_member_windows THEN '
               AND EXISTS (SELECT 1 FROM history.memberships m
                            WHERE m.tenant_key = $16 AND m.account_key = $2 AND m.conversation_key = d.conversation_key'
                || CASE WHEN p_member_windows THEN '
                              AND m.since <= d.sent_at AND (m.until IS NULL OR d.sent_at < m.until)' ELSE '' END
                || ')' ELSE '' END
        -- a semi-join: the windows are hashed once, not searched per row
        || CASE WHEN p_windows IS NOT NULL THEN '
               AND EXISTS (SELECT 1 FROM ROWS FROM (pg_catalog.unnest($3), pg_catalog.unnest($4)) w(conversation_key, visible)
                            WHERE w.conversation_key = d.conversation_key AND d.sent_at <@ w.visible)' ELSE '' END
        || '
               AND ($5 IS NULL OR d.author_key = ANY ($5))
               AND ($6 IS NULL OR d.sent_at >= $6) AND ($7 IS NULL OR d.sent_at < $7)'
        || CASE WHEN pg_catalog.cardinality(p_exclude) > 0 THEN '
               AND d.message_key <> ALL ($12)' ELSE '' END
        || CASE WHEN pg_catalog.cardinality(p_audience) > 0 THEN '
               AND NOT (d.has_lineage AND EXISTS (
                       SELECT 1 FROM history.message_lineage l
                        WHERE l.tenant_key = $16 AND l.message_key = d.message_key
                          AND history._outside_windows(l.ancestor_conversation_key, l.ancestor_sent_at, $14, $15)))' ELSE '' END
$function$;

COMMENT ON FUNCTION history._match_filters(bigint[], tstzmultirange[], boolean, bigint[], bigint[]) IS
    'Internal: the SQL filters of _newest_matches'' dynamic plans (list test, membership, windows, author, time, eligibility)';
REVOKE ALL ON FUNCTION history._match_filters(bigint[], tstzmultirange[], boolean, bigint[], bigint[]) FROM PUBLIC;
