-- _ranking_pass: the search's candidates and scoring stages. The newest
-- max_candidates + 1 matches of p_query passing the speaker (p_authors) and
-- time filters inside the run's eligible windows (history._newest_matches:
-- the audience's windows cut to the agent's, or without an audience the
-- agent's own), the first max_candidates of them tested for lineage and
-- context (history._ineligible_by) and the rest scored as one set
-- (history._score); the first of them re-ranked by their windows
-- (history._window_scores: the neighbours of the first 30 are walked for it);
-- the best p_limit, best first, as typed candidates, with the neighbours
-- walked for them (history._search_in_tenant shows those and walks only the
-- rest: a match past the first 30, or every one when the stage is off).
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
    v_audience   boolean := cardinality(p_scope.audience) > 0;
    v_result     history._ranking_pass;
    v_c          history._ranked_candidate;
    -- the candidates, column by column (statement 1 to statements 2 and 3)
    v_keys       bigint[];
    v_ids        text[];
    v_convs      bigint[];
    v_authors    bigint[];
    v_sent       timestamptz[];
    v_documents  tsvector[];
    v_visible    tstzmultirange[];
    v_excluded   text[];
    v_participated bigint[] := '{}';
    t            record;
    -- the first matches by _score's total (statement 3 to the window stage)
    v_first      history._ranked_candidate[] := '{}';
    v_first_documents tsvector[] := '{}';
    v_term_rarity float8[];
    v_neighbours history._hit_neighbours[];
    v_window_of  bigint[];
    v_window_keys bigint[];
    v_document_keys bigint[];
    v_window_documents tsvector[];
BEGIN
    v_result.ranked := '{}';
    -- Separate statements, so that no statement both calls a function that reads
    -- the tables and reads them itself: on Citus such a statement is pushed
    -- to a shard, where the function's own reads are refused.
    -- 1. The candidates (functions only).
    WITH newest AS MATERIALIZED (
        SELECT n.message_key, n.message_id, n.conversation_key, n.author_key, n.sent_at, n.has_lineage, n.document,
               row_number() OVER (ORDER BY n.sent_at DESC, n.message_id DESC) AS position
          FROM history._newest_matches(
                   p_scope.tenant_key, p_query, p_scope.agent_key,
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
        SELECT * FROM history._member_windows(p_scope.tenant_key, p_scope.agent_key, ARRAY(SELECT DISTINCT conversation_key FROM newest))
         WHERE NOT v_audience
    ), candidates AS MATERIALIZED (
        SELECT c.message_key, c.message_id, c.conversation_key, c.author_key, c.sent_at, c.document, ew.visible,
               -- inside the eligible windows: only lineage and context can fail
               history._ineligible_by(p_scope.tenant_key, c.message_key, c.sent_at, c.has_lineage, ew.visible, ew.visible,
                                      p_scope.audience, p_scope.audience_conversations, p_scope.audience_windows,
                                      p_scope.context) AS excluded_by
          FROM newest c
          JOIN eligible_windows ew ON ew.conversation_key = c.conversation_key
         WHERE c.position <= p_settings.max_candidates AND c.sent_at <@ ew.visible
    )
    SELECT coalesce(array_agg(c.message_key), '{}'), array_agg(c.message_id), array_agg(c.conversation_key),
           array_agg(c.author_key), array_agg(c.sent_at), array_agg(c.document), array_agg(c.visible),
           array_agg(c.excluded_by),
           count(*) FILTER (WHERE c.excluded_by = 'lineage'), count(*) FILTER (WHERE c.excluded_by = 'in_context'),
           (SELECT count(*) FROM newest) > p_settings.max_candidates
      INTO v_keys, v_ids, v_convs, v_authors, v_sent, v_documents, v_visible, v_excluded,
           v_result.excluded_lineage, v_result.excluded_in_context, v_result.capped
      FROM candidates c;

    -- 2. The candidates' conversations where the requester (or a linked
    -- account) wrote a message the audience may see: alive (the projection
    -- holds live messages only), inside the eligible windows, its lineage
    -- passing (the test of _lineage_blocked, inline). Another message never counts.
    IF cardinality(p_scope.requester_accounts) > 0 AND array_position(v_excluded, NULL) IS NOT NULL THEN
        SELECT coalesce(array_agg(w.conversation_key), '{}') INTO v_participated
          FROM (SELECT DISTINCT ON (e.conversation_key) e.conversation_key, e.visible
                  FROM unnest(v_convs, v_visible, v_excluded) e(conversation_key, visible, excluded_by)
                 WHERE e.excluded_by IS NULL) w
         WHERE EXISTS (SELECT FROM history.conversation_authors ca
                        WHERE ca.author_key = ANY (p_scope.requester_accounts) AND ca.conversation_key = w.conversation_key
                          AND ca.tenant_key = p_scope.tenant_key)
           AND EXISTS (SELECT FROM unnest(w.visible) v(r), history.message_search_documents d
                        WHERE d.conversation_key = w.conversation_key AND d.tenant_key = p_scope.tenant_key
                          AND d.sent_at >= coalesce(lower(v.r), '-infinity') AND d.sent_at <@ v.r
                          AND d.author_key = ANY (p_scope.requester_accounts)
                          AND NOT (d.has_lineage AND coalesce(cardinality(p_scope.audience), 0) > 0 AND EXISTS (
                                  SELECT 1 FROM history.message_lineage l
                                   WHERE l.tenant_key = p_scope.tenant_key AND l.message_key = d.message_key
                                     AND history._outside_windows(l.ancestor_conversation_key, l.ancestor_sent_at,
                                                                  p_scope.audience_conversations, p_scope.audience_windows))));
    END IF;

    -- 3. Scored as one set (functions only): history._score's rarity and
    -- length statistics come from the eligible candidates alone.
    FOR t IN
        WITH candidates AS MATERIALIZED (
            SELECT * FROM unnest(v_keys, v_ids, v_convs, v_authors, v_sent, v_documents, v_visible, v_excluded)
                   c(message_key, message_id, conversation_key, author_key, sent_at, document, visible, excluded_by)
        )
        SELECT c.*, s.text_score, s.coverage, s.actor, s.conversation, s.participation, s.recency,
               s.named_speaker, s.session, s.period, s.tells_time, s.total, s.term_rarity,
               ARRAY(SELECT term FROM unnest(p_terms) WITH ORDINALITY q(term, ord)
                      WHERE term = ANY (tsvector_to_array(c.document)) ORDER BY ord) AS matched_terms
          FROM (SELECT array_agg(e.message_key) AS message_keys, array_agg(e.document) AS documents,
                       array_agg(e.author_key) AS authors, array_agg(e.conversation_key) AS conversations,
                       array_agg(e.sent_at) AS sent_at
                  FROM candidates e WHERE e.excluded_by IS NULL) a
         CROSS JOIN LATERAL history._score(a.message_keys, a.documents, a.authors, a.conversations, a.sent_at,
                                           p_terms, p_name_terms, p_scope.requester_accounts, p_scope.conversation_key,
                                           v_participated, p_named_authors, p_settings, now(), p_period, p_asks_when) s
          JOIN candidates c ON c.message_key = s.message_key
         ORDER BY s.total DESC, c.sent_at DESC, c.message_id
         LIMIT greatest(p_limit, 100)
    LOOP
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
        v_c.window_coverage := 0;  -- the window stage's, below, when it runs
        v_c.feedback := 0;
        v_first := v_first || v_c;
        v_first_documents := v_first_documents || t.document;
        v_term_rarity := t.term_rarity;
    END LOOP;
    IF cardinality(v_first) = 0 OR (p_settings.window_coverage_weight = 0 AND p_settings.feedback_weight = 0) THEN
        v_result.ranked := v_first[1:p_limit];
        RETURN v_result;
    END IF;

    -- 4. The window stage. The eligible neighbours of the first 30 (what each
    -- would be shown with: history._hit_neighbours, as for the hits), then
    -- their documents, then the scores (functions only).
    v_neighbours := history._hit_neighbours(p_scope.tenant_key, v_first[1:30], p_scope.audience,
                                            p_scope.audience_conversations, p_scope.audience_windows,
                                            p_scope.context);
    SELECT coalesce(array_agg((v_first[i]).message_key), '{}'), coalesce(array_agg(n.message_key), '{}')
      INTO v_window_of, v_window_keys
      FROM generate_subscripts(v_neighbours, 1) i, unnest(v_neighbours[i].before || v_neighbours[i].after) n(message_key);
    -- by key alone (a join with the list above is planned blind on a shard: a scan of it on Citus)
    SELECT coalesce(array_agg(d.message_key), '{}'), coalesce(array_agg(d.document), '{}')
      INTO v_document_keys, v_window_documents
      FROM history.message_search_documents d
     WHERE d.message_key = ANY (v_window_keys) AND d.tenant_key = p_scope.tenant_key;
    SELECT coalesce(array_agg(w.match_key), '{}'), coalesce(array_agg(d.document), '{}')
      INTO v_window_of, v_window_documents
      FROM unnest(v_window_of, v_window_keys) w(match_key, message_key)
      JOIN unnest(v_document_keys, v_window_documents) d(message_key, document) ON d.message_key = w.message_key;
    v_result.neighbours := '{}';
    FOR t IN
        SELECT f.ordinality::integer AS i, w.window_coverage, w.feedback
          FROM unnest(v_first) WITH ORDINALITY f
          JOIN history._window_scores(
                   ARRAY(SELECT x.message_key FROM unnest(v_first) x), ARRAY(SELECT x.message_id FROM unnest(v_first) x),
                   ARRAY(SELECT x.sent_at FROM unnest(v_first) x), ARRAY(SELECT x.total FROM unnest(v_first) x),
                   v_first_documents, v_window_of, v_window_documents, p_terms, v_term_rarity, p_settings, 30) w
            ON w.message_key = f.message_key
         ORDER BY f.total + w.window_coverage + w.feedback DESC, f.sent_at DESC, f.message_id
         LIMIT p_limit
    LOOP
        v_c := v_first[t.i];
        v_c.total := v_c.total + t.window_coverage + t.feedback;
        v_c.window_coverage := t.window_coverage;
        v_c.feedback := t.feedback;
        v_result.ranked := v_result.ranked || v_c;
        -- what the walk above found (NULL past the first 30): the search shows these
        v_result.neighbours := v_result.neighbours || v_neighbours[t.i];
    END LOOP;
    RETURN v_result;
END
$function$;

COMMENT ON FUNCTION history._ranking_pass(history._search_scope, tsquery, text[], text[], bigint[], bigint[], timestamptz, timestamptz, history.search_settings, integer, tstzrange, tsquery, boolean) IS
    'Internal: the search''s candidates and scoring stages: the best eligible matches inside the eligible windows, ranked';
REVOKE ALL ON FUNCTION history._ranking_pass(history._search_scope, tsquery, text[], text[], bigint[], bigint[], timestamptz, timestamptz, history.search_settings, integer, tstzrange, tsquery, boolean) FROM PUBLIC;
