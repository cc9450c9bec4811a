-- Revert history-search:_ranking_pass from pg: back to its @v0.3.0 version
-- (if the signature changed, drop the new function here first).
-- Deploy history-search:_ranking_pass to pg
-- requires: search_stage_types _newest_matches _ineligible_by _member_windows _lineage_blocked _score
-- The function lives in db/functions/_ranking_pass.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _ranking_pass: the search's candidates and scoring stages. The newest
-- max_candidates + 1 matches of p_query passing the speaker (p_authors) and
-- time filters inside the run's eligible windows (history._newest_matches:
-- the audience's windows cut to the agent's, or without an audience the
-- agent's own), the first max_candidates of them tested for lineage and
-- context (history._ineligible_by) and the rest scored as one set
-- (history._score); the best p_limit, best first, as typed candidates.
-- With p_refill, lineage and context are tested inside _newest_matches'
-- scan, before its cap (the caller asks for that when the first read reached
-- the cap and removed some: every rule applies before any cap); its counts
-- are then zero. Run under plan_cache_mode = force_custom_plan (the caller's:
-- a generic plan cannot tell a rare term from one in every message).
CREATE OR REPLACE FUNCTION history._ranking_pass(
    p_scope history._search_scope, p_query tsquery, p_terms text[], p_name_terms text[], p_named_authors bigint[],
    p_authors bigint[], p_after timestamptz, p_before timestamptz, p_settings history.search_settings,
    p_limit integer, p_period tstzrange, p_asks_when tsquery, p_refill boolean)
RETURNS history._ranking_pass
LANGUAGE plpgsql
VOLATILE  -- it calls _newest_matches, which asks EXPLAIN and switches planner settings
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_audience boolean := cardinality(p_scope.audience) > 0;
    v_result   history._ranking_pass;
    v_c        history._ranked_candidate;
    t          record;
BEGIN
    v_result.ranked := '{}';
    FOR t IN
        WITH newest AS MATERIALIZED (
            SELECT n.message_key, n.message_id, n.conversation_key, n.author_key, n.sent_at, n.has_lineage, n.document,
                   row_number() OVER (ORDER BY n.sent_at DESC, n.message_id DESC) AS position
              FROM history._newest_matches(
                       p_query, p_scope.agent_key,
                       CASE WHEN v_audience THEN p_scope.eligible_conversations ELSE p_scope.agent_conversations END,
                       -- only matches inside the eligible windows count against the cap
                       p_windows => CASE WHEN v_audience THEN p_scope.eligible_windows END,
                       p_member_windows => NOT v_audience,
                       p_authors => p_authors, p_after => p_after, p_before => p_before,
                       p_count => p_settings.max_candidates + 1,
                       p_audience => CASE WHEN p_refill THEN p_scope.audience END,
                       p_audience_conversations => CASE WHEN p_refill THEN p_scope.audience_conversations END,
                       p_audience_windows => CASE WHEN p_refill THEN p_scope.audience_windows END,
                       p_exclude => CASE WHEN p_refill THEN p_scope.context END) n
        ), eligible_windows AS (
            SELECT * FROM unnest(p_scope.eligible_conversations, p_scope.eligible_windows) ew(conversation_key, visible)
             WHERE v_audience
            UNION ALL
            SELECT * FROM history._member_windows(p_scope.agent_key, ARRAY(SELECT DISTINCT conversation_key FROM newest))
             WHERE NOT v_audience
        ), candidates AS MATERIALIZED (
            SELECT c.message_key, c.message_id, c.conversation_key, c.author_key, c.sent_at, c.document, ew.visible,
                   -- inside the eligible windows: only lineage and context can fail
                   history._ineligible_by(c.message_key, c.sent_at, c.has_lineage, ew.visible, ew.visible,
                                          p_scope.audience, p_scope.audience_conversations, p_scope.audience_windows,
                                          p_scope.context) AS excluded_by
              FROM newest c
              JOIN eligible_windows ew ON ew.conversation_key = c.conversation_key
             WHERE c.position <= p_settings.max_candidates AND c.sent_at <@ ew.visible
        ), participated AS (
            -- The candidates' conversations where the requester (or a linked
            -- account) wrote a message the audience may see: alive (the
            -- projection holds live messages only), inside the eligible
            -- windows, its lineage passing. Another message never counts.
            SELECT coalesce(array_agg(w.conversation_key), '{}') AS conversation_keys
              FROM (SELECT DISTINCT ON (e.conversation_key) e.conversation_key, e.visible
                      FROM candidates e WHERE e.excluded_by IS NULL) w
             WHERE EXISTS (SELECT FROM history.conversation_authors ca
                            WHERE ca.author_key = ANY (p_scope.requester_accounts) AND ca.conversation_key = w.conversation_key)
               AND EXISTS (SELECT FROM unnest(w.visible) v(r), history.message_search_documents d
                            WHERE d.conversation_key = w.conversation_key
                              AND d.sent_at >= coalesce(lower(v.r), '-infinity') AND d.sent_at <@ v.r
                              AND d.author_key = ANY (p_scope.requester_accounts)
                              AND (NOT d.has_lineage
                                   OR NOT history._lineage_blocked(d.message_key, p_scope.audience_conversations,
                                                                   p_scope.audience_windows, p_scope.audience)))
        ), top AS (
            -- history._score ranks the eligible candidates as one set: its
            -- rarity and length statistics come from them alone.
            SELECT c.*, s.text_score, s.coverage, s.actor, s.conversation, s.participation, s.recency,
                   s.named_speaker, s.session, s.period, s.tells_time, s.total
              FROM (SELECT array_agg(e.message_key) AS message_keys, array_agg(e.document) AS documents,
                           array_agg(e.author_key) AS authors, array_agg(e.conversation_key) AS conversations,
                           array_agg(e.sent_at) AS sent_at
                      FROM candidates e WHERE e.excluded_by IS NULL) a
             CROSS JOIN LATERAL history._score(a.message_keys, a.documents, a.authors, a.conversations, a.sent_at,
                                               p_terms, p_name_terms, p_scope.requester_accounts, p_scope.conversation_key,
                                               (SELECT p.conversation_keys FROM participated p),
                                               p_named_authors, p_settings, now(), p_period, p_asks_when) s
              JOIN candidates c ON c.message_key = s.message_key
             ORDER BY s.total DESC, c.sent_at DESC, c.message_id
             LIMIT p_limit
        ), counts AS (
            SELECT (SELECT count(*) FROM candidates WHERE excluded_by = 'lineage') AS lineage,
                   (SELECT count(*) FROM candidates WHERE excluded_by = 'in_context') AS in_context,
                   (SELECT count(*) FROM newest) > p_settings.max_candidates AS capped
        )
        -- one row even without hits: the counts
        SELECT k.lineage, k.in_context, k.capped, x.*,
               ARRAY(SELECT term FROM unnest(p_terms) WITH ORDINALITY q(term, ord)
                      WHERE term = ANY (tsvector_to_array(x.document)) ORDER BY ord) AS matched_terms
          FROM counts k LEFT JOIN top x ON true
         ORDER BY x.total DESC, x.sent_at DESC, x.message_id
    LOOP
        v_result.excluded_lineage := t.lineage;
        v_result.excluded_in_context := t.in_context;
        v_result.capped := t.capped;
        CONTINUE WHEN t.message_key IS NULL;
        v_c.message_key := t.message_key;
        v_c.message_id := t.message_id;
        v_c.conversation_key := t.conversation_key;
        v_c.author_key := t.author_key;
        v_c.sent_at := t.sent_at;
        v_c.visible := t.visible;
        v_c.text_score := t.text_score;
        v_c.coverage := t.coverage;
        v_c.actor := t.actor;
        v_c.conversation := t.conversation;
        v_c.participation := t.participation;
        v_c.recency := t.recency;
        v_c.total := t.total;
        v_c.matched_terms := t.matched_terms;
        v_c.named_speaker := t.named_speaker;
        v_c.session := t.session;
        v_c.period := t.period;
        v_c.tells_time := t.tells_time;
        v_result.ranked := v_result.ranked || v_c;
    END LOOP;
    RETURN v_result;
END
$function$;

COMMENT ON FUNCTION history._ranking_pass(history._search_scope, tsquery, text[], text[], bigint[], bigint[], timestamptz, timestamptz, history.search_settings, integer, tstzrange, tsquery, boolean) IS
    'Internal: the search''s candidates and scoring stages: the best eligible matches inside the eligible windows, ranked';
REVOKE ALL ON FUNCTION history._ranking_pass(history._search_scope, tsquery, text[], text[], bigint[], bigint[], timestamptz, timestamptz, history.search_settings, integer, tstzrange, tsquery, boolean) FROM PUBLIC;

RESET ROLE;
COMMIT;
