-- Revert history-search:_search_history from pg: back to its @v0.2.0 version
-- (if the signature changed, drop the new function here first).
-- Deploy history-search:_search_history to pg
-- The function lives in db/functions/_search_history.sql.
-- Reworked after 0.1.0: an over-long query is refused first; signals and query
-- languages come from what the run may see; the hits wait for _search_reveal;
-- the period the query names and its time words go to _score, and reasons and
-- the audit carry the session, period and tells_time components.
BEGIN;
SET LOCAL ROLE history_owner;

-- _search_history: the search behind the procedure history.search_history
-- (SPEC §2-§4). In one transaction: validate, lock the run, find the eligible matches,
-- rank them, pick neighbours, admit within the run's 400-message budget,
-- write the audit event, then the evidence, the run's count and its trace,
-- and keep the hits for history._search_reveal, which hands them out once this
-- transaction has committed (docs/decisions.md, "Audit before reveal"). Only a
-- superuser session (tests, a DBA) gets the hits from this function directly.
-- The query text is used for matching and for the keyed digest only; it is
-- never stored, echoed in an error or sent in a notice.
CREATE OR REPLACE FUNCTION history._search_history(
    p_run     uuid,
    p_query   text,
    p_speaker text        DEFAULT 'anyone',
    p_after   timestamptz DEFAULT NULL,
    p_before  timestamptz DEFAULT NULL,
    p_limit   integer     DEFAULT 8
) RETURNS history.search_result
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, history, pg_temp
-- Results, errors and audit values never depend on the caller's session settings.
SET extra_float_digits = 1
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = postgres
SET TimeZone = 'UTC'
SET client_min_messages = warning
-- JIT compilation costs more than any plan here saves (100+ ms once costs cross jit_above_cost).
SET jit = off
-- The body has backslash literals: they must not change meaning with the caller's setting.
SET standard_conforming_strings = on
-- A term in ~1% of 10M messages needs a ~5 MB bitmap: at the default 4MB it
-- goes lossy and every row of its pages is rechecked (docs/benchmarks.md).
SET work_mem = '32MB'
-- Steps 4 and 5 switch to custom plans, the rest to generic ones (see there).
SET plan_cache_mode = auto
-- Every pass is bounded by its caps: a parallel plan added 14-28 ms to a
-- search at 10M (more than the work its workers share), and under concurrent
-- searches workers only take cores from the other searches (docs/benchmarks.md).
SET max_parallel_workers_per_gather = 0
AS $function$
DECLARE
    c_budget     CONSTANT integer := 400;
    -- Agents in more conversations than this are tested by membership lookups.
    c_listed_conversations CONSTANT integer := 5000;
    v_speaker    text := coalesce(p_speaker, 'anyone');
    v_limit      integer := coalesce(p_limit, 8);
    v_run        history.runs;
    v_settings   history.search_settings;
    v_terms      text[];
    v_query      tsquery;
    v_requester_accounts bigint[];
    v_context    bigint[];
    v_audience   bigint[];
    v_agent_convs       bigint[];
    v_audience_convs    bigint[] := '{}';
    v_audience_visible  tstzmultirange[] := '{}';
    v_eligible_convs    bigint[] := '{}';
    v_eligible_visible  tstzmultirange[] := '{}';
    v_languages         regconfig[];
    v_name_terms        text[];
    v_named_authors     bigint[];
    v_capped            boolean := false;
    v_exclusions jsonb := '{}';
    v_ranked     history._ranked_candidate[] := '{}';
    v_hit        history._ranked_candidate;
    v_before     bigint[][];
    v_after      bigint[][];
    v_wanted     bigint[] := '{}';
    v_alive      bigint[];
    v_prior      bigint[];
    v_selected   bigint[] := '{}';
    v_new        bigint[] := '{}';
    v_remaining  integer;
    v_withheld   boolean := false;
    v_budget_out integer := 0;
    v_dead       integer := 0;
    v_admitted   jsonb := '[]';
    v_admit_before bigint[];
    v_admit_after  bigint[];
    v_nb         bigint;
    v_status     text;
    v_key        history.query_digest_keys;
    v_event_key  bigint;
    v_event_id   uuid;
    v_hits       history.search_hit[];
    v_hit_out    history.search_hit;
    i            integer;
BEGIN
    -- 0. Only in a transaction a procedure began (its COMMIT starts the next
    --    one with a fresh transaction_timestamp(), later than the CALL's
    --    statement_timestamp(); a transaction begun by a client statement
    --    starts at that statement's time). So a direct call cannot leave the
    --    search's locks (the run row, the hits' FOR SHARE) in a transaction
    --    the caller keeps open. Hits are guarded by history._search_reveal
    --    whatever the caller; this is state, not message text, so it holds
    --    in any lc_messages. A superuser session (tests, a DBA) may call it.
    IF NOT transaction_timestamp() > statement_timestamp()
       AND NOT (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = session_user) THEN
        RAISE EXCEPTION 'history._search_history runs only in a transaction begun by CALL history.search_history'
            USING ERRCODE = '42501',
                  HINT = 'CALL history.search_history(p_run, p_query, ..., result => NULL) outside a transaction block.';
    END IF;

    -- 1. Arguments. Errors name the bad value, except the query's text.
    IF p_query IS NULL THEN
        RAISE EXCEPTION 'p_query must be text, got NULL' USING ERRCODE = 'HS001', HINT = 'Pass '''' for an empty search.';
    END IF;
    -- Before any other work: a long query would cost its length in every step.
    -- A text has at most as many characters as bytes, so most need no count.
    SELECT * INTO v_settings FROM history.search_settings;
    IF octet_length(p_query) > v_settings.max_query_chars AND length(p_query) > v_settings.max_query_chars THEN
        RAISE EXCEPTION 'p_query is % characters long, over the maximum of %', length(p_query), v_settings.max_query_chars
            USING ERRCODE = 'HS001', HINT = 'Shorten the query (search_settings.max_query_chars).';
    END IF;
    IF v_speaker NOT IN ('anyone', 'requester', 'you') THEN
        RAISE EXCEPTION 'invalid speaker %', quote_literal(left(v_speaker, 64))
            USING ERRCODE = 'HS001', HINT = 'p_speaker is ''anyone'', ''requester'' or ''you''.';
    END IF;
    IF v_limit < 1 THEN
        RAISE EXCEPTION 'p_limit must be at least 1, got %', v_limit USING ERRCODE = 'HS001';
    END IF;
    v_limit := least(v_limit, 20);
    IF p_after > p_before THEN
        RAISE EXCEPTION 'p_after % is later than p_before %', p_after, p_before USING ERRCODE = 'HS001';
    END IF;

    -- 2. The run, locked by an UPDATE: concurrent searches of one run queue
    --    here, and a REPEATABLE READ caller that lost the race gets 40001.
    v_run := history._lock_open_run(p_run);
    v_context := v_run.loaded_message_keys || v_run.current_message_key;
    v_audience := v_run.audience_keys;
    SELECT array_agg(a.account_key) INTO v_requester_accounts
      FROM history.accounts a
     WHERE a.component_key = (SELECT r.component_key FROM history.accounts r WHERE r.account_key = v_run.requester_key);

    -- Steps 4 and 5 are planned for this search's terms, audience and windows
    -- (a generic plan cannot tell a rare term from one in every message).
    -- SET LOCAL inside a function with a SET clause ends with the function.
    PERFORM set_config('plan_cache_mode', 'force_custom_plan', true);

    -- 4. The windows, once per search. The agent's conversations are listed
    --    only when they are few (an array the planner can use); an agent in
    --    thousands of them is tested by membership lookups instead, and its
    --    windows are only ever built for the conversations a pass touches.
    --    With an audience, the eligible windows are the audience's windows
    --    (few: _audience_windows starts from its rarest readers) cut down to
    --    the agent's; without one they are the agent's own, built lazily.
    SELECT CASE WHEN count(*) <= c_listed_conversations THEN coalesce(array_agg(m.conversation_key), '{}') END
      INTO v_agent_convs
      FROM (SELECT DISTINCT m.conversation_key FROM history.memberships m
             WHERE m.account_key = v_run.agent_key LIMIT c_listed_conversations + 1) m;
    IF cardinality(v_audience) > 0 THEN
        SELECT coalesce(array_agg(w.conversation_key), '{}'), coalesce(array_agg(w.visible), '{}')
          INTO v_audience_convs, v_audience_visible
          FROM history._audience_windows(v_audience, NULL) w;
        SELECT coalesce(array_agg(u.conversation_key), '{}'), coalesce(array_agg(a.visible * u.visible), '{}')
          INTO v_eligible_convs, v_eligible_visible
          FROM unnest(v_audience_convs, v_audience_visible) u(conversation_key, visible)
          JOIN history._member_windows(v_run.agent_key, v_audience_convs) a ON a.conversation_key = u.conversation_key
         WHERE NOT isempty(a.visible * u.visible);
    END IF;

    -- 3. (After the windows, whose conversations it needs.) The query,
    --    analysed as documents are (docs/text-analysis.md), in the default
    --    language and those of the destination and of the conversations this
    --    run may search, never another's (what the run may not see never
    --    changes how the query is read): its terms (distinct lexemes, first
    --    seen first) and the tsquery a message must match (the OR of its
    --    alternatives; a typed identifier matches whole or where all its
    --    parts occur). Typed operators are never parsed.
    v_languages := history._visible_languages(
        v_run.agent_key, CASE WHEN cardinality(v_audience) > 0 THEN v_eligible_convs ELSE v_agent_convs END,
        v_run.conversation_key);
    SELECT a.terms, a.query INTO v_terms, v_query
      FROM history._query_analysis(p_query, v_languages, v_settings.max_query_terms) a;

    -- 5. Matches, in two bounded passes (docs/decisions.md, "A search examines
    --    a bounded number of candidates"; _newest_matches finds them). The
    --    first takes the newest max_counted_candidates matches in the agent's
    --    conversations and counts the first of the rules speaker, time,
    --    perspective, audience that removes each. The second takes the newest
    --    max_candidates matches passing the speaker and time filters inside
    --    the eligible windows (so ineligible newer matches never crowd out an
    --    eligible older one); it counts their lineage and in-context removals
    --    and ranks the rest.
    --    One more row than the cap is read to tell whether the cap was reached.
    IF v_query IS NOT NULL THEN
        WITH newest AS MATERIALIZED (
            SELECT n.message_key, n.conversation_key, n.author_key, n.sent_at,
                   row_number() OVER (ORDER BY n.sent_at DESC, n.message_id DESC) AS position
              FROM history._newest_matches(v_query, v_run.agent_key, v_agent_convs,
                                           p_windows => NULL, p_member_windows => false,  -- at any time: it counts the rest
                                           p_authors => NULL, p_after => NULL, p_before => NULL,
                                           p_count => v_settings.max_counted_candidates + 1) n
        ), agent_windows AS (
            SELECT * FROM history._member_windows(v_run.agent_key, ARRAY(SELECT DISTINCT conversation_key FROM newest))
        )
        SELECT coalesce(jsonb_object_agg(x.excluded_by, x.n) FILTER (WHERE x.excluded_by IS NOT NULL), '{}'),
               (SELECT count(*) FROM newest) > v_settings.max_counted_candidates
          INTO v_exclusions, v_capped
          FROM (SELECT r.excluded_by, count(*) AS n
                  FROM newest c
                  JOIN agent_windows aw ON aw.conversation_key = c.conversation_key
                  LEFT JOIN unnest(v_audience_convs, v_audience_visible) au(conversation_key, visible)
                         ON au.conversation_key = c.conversation_key
                 CROSS JOIN LATERAL (SELECT CASE
                     WHEN v_speaker = 'requester' AND c.author_key <> ALL (v_requester_accounts) THEN 'speaker'
                     WHEN v_speaker = 'you' AND c.author_key <> v_run.agent_key THEN 'speaker'
                     WHEN c.sent_at < p_after OR c.sent_at >= p_before THEN 'time'
                     WHEN NOT c.sent_at <@ aw.visible THEN 'perspective'
                     WHEN cardinality(v_audience) > 0 AND NOT coalesce(c.sent_at <@ au.visible, false) THEN 'audience'
                   END AS excluded_by) r
                 WHERE c.position <= v_settings.max_counted_candidates
                 GROUP BY r.excluded_by) x;

        -- The people of this run (its audience, the requester and linked
        -- accounts, the agent) the query names, and the query terms that are
        -- their names: a name is weak evidence on its own (name_term_weight),
        -- what the named person wrote is preferred (named_speaker_weight).
        -- Each name's terms are kept with its account (_refresh_name_terms);
        -- one made in other languages than this query's is analysed here.
        WITH people AS MATERIALIZED (
            SELECT a.account_key,
                   CASE WHEN a.name_languages = v_languages::text[] THEN a.name_terms
                        ELSE coalesce(history._query_terms(a.display_name, v_languages, 2147483647), '{}') END AS terms
              FROM history.accounts a
             WHERE a.account_key = ANY (v_audience || v_requester_accounts || v_run.agent_key)
        )
        SELECT ARRAY(SELECT q.t FROM unnest(v_terms) WITH ORDINALITY q(t, o)
                      WHERE EXISTS (SELECT FROM people p WHERE q.t = ANY (p.terms)) ORDER BY q.o),
               coalesce((SELECT array_agg(p.account_key ORDER BY p.account_key) FROM people p WHERE p.terms && v_terms), '{}')
          INTO v_name_terms, v_named_authors;
        WITH newest AS MATERIALIZED (
            SELECT n.message_key, n.message_id, n.conversation_key, n.author_key, n.sent_at, n.has_lineage, n.document,
                   row_number() OVER (ORDER BY n.sent_at DESC, n.message_id DESC) AS position
              FROM history._newest_matches(
                       v_query, v_run.agent_key,
                       CASE WHEN cardinality(v_audience) > 0 THEN v_eligible_convs ELSE v_agent_convs END,
                       -- only matches inside the eligible windows count against the cap (SPEC §9):
                       -- the audience's cut to the agent's, or without an audience the agent's own
                       p_windows => CASE WHEN cardinality(v_audience) > 0 THEN v_eligible_visible END,
                       p_member_windows => coalesce(cardinality(v_audience), 0) = 0,
                       p_authors => CASE v_speaker WHEN 'requester' THEN v_requester_accounts
                                                   WHEN 'you' THEN ARRAY[v_run.agent_key] END,
                       p_after => p_after, p_before => p_before, p_count => v_settings.max_candidates + 1) n
        ), eligible_windows AS (
            SELECT * FROM unnest(v_eligible_convs, v_eligible_visible) ew(conversation_key, visible)
             WHERE cardinality(v_audience) > 0
            UNION ALL
            SELECT * FROM history._member_windows(v_run.agent_key, ARRAY(SELECT DISTINCT conversation_key FROM newest))
             WHERE cardinality(v_audience) = 0
        ), candidates AS MATERIALIZED (
            SELECT c.message_key, c.message_id, c.conversation_key, c.author_key, c.sent_at, c.document, ew.visible,
                   CASE
                     WHEN c.has_lineage
                          AND history._lineage_blocked(c.message_key, v_audience_convs, v_audience_visible, v_audience)
                       THEN 'lineage'
                     WHEN c.message_key = ANY (v_context) THEN 'in_context'
                   END AS excluded_by
              FROM newest c
              JOIN eligible_windows ew ON ew.conversation_key = c.conversation_key
             WHERE c.position <= v_settings.max_candidates AND c.sent_at <@ ew.visible
        ), participated AS (
            -- The candidates' conversations where the requester (or a linked
            -- account) wrote a message the audience may see: alive (the
            -- projection holds live messages only), inside the eligible
            -- windows, its lineage passing. Another message never counts.
            SELECT coalesce(array_agg(w.conversation_key), '{}') AS conversation_keys
              FROM (SELECT DISTINCT ON (e.conversation_key) e.conversation_key, e.visible
                      FROM candidates e WHERE e.excluded_by IS NULL) w
             WHERE EXISTS (SELECT FROM history.conversation_authors ca
                            WHERE ca.author_key = ANY (v_requester_accounts) AND ca.conversation_key = w.conversation_key)
               AND EXISTS (SELECT FROM unnest(w.visible) v(r), history.message_search_documents d
                            WHERE d.conversation_key = w.conversation_key
                              AND d.sent_at >= coalesce(lower(v.r), '-infinity') AND d.sent_at <@ v.r
                              AND d.author_key = ANY (v_requester_accounts)
                              AND (NOT d.has_lineage
                                   OR NOT history._lineage_blocked(d.message_key, v_audience_convs, v_audience_visible,
                                                                   v_audience)))
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
                                               v_terms, v_name_terms, v_requester_accounts, v_run.conversation_key,
                                               (SELECT p.conversation_keys FROM participated p),
                                               v_named_authors, v_settings, now(),
                                               history._query_period(p_query, now()),
                                               history._query_asks_when(p_query, v_languages)) s
              JOIN candidates c ON c.message_key = s.message_key
             ORDER BY s.total DESC, c.sent_at DESC, c.message_id
             LIMIT v_limit
        )
        SELECT v_exclusions || (SELECT coalesce(jsonb_object_agg(x.excluded_by, x.n), '{}')
                                  FROM (SELECT excluded_by, count(*) AS n FROM candidates
                                         WHERE excluded_by IS NOT NULL GROUP BY 1) x),
               v_capped OR (SELECT count(*) FROM newest) > v_settings.max_candidates,
               (SELECT coalesce(array_agg(ROW(t.message_key, t.message_id, t.conversation_key, t.author_key, t.sent_at,
                                              t.visible, t.text_score, t.coverage, t.actor, t.conversation,
                                              t.participation, t.recency, t.total,
                                              ARRAY(SELECT term FROM unnest(v_terms) WITH ORDINALITY q(term, ord)
                                                     WHERE term = ANY (tsvector_to_array(t.document)) ORDER BY ord),
                                              t.named_speaker, t.session, t.period, t.tells_time
                                          )::history._ranked_candidate
                                      ORDER BY t.total DESC, t.sent_at DESC, t.message_id), '{}')
                  FROM top t)
          INTO v_exclusions, v_capped, v_ranked;
    END IF;
    -- From here on every statement reads a handful of rows by key: plan once.
    PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);

    -- 6. Neighbours: up to two eligible messages each side of every hit,
    --    nearest first, searched only inside the hit's eligible windows so a
    --    long ineligible stretch costs one index probe per window. One
    --    statement for all hits; v_before[i] and v_after[i] are padded with nulls.
    SELECT coalesce(array_agg(ARRAY[b.k[1], b.k[2]] ORDER BY h.ordinality), array_fill(NULL::bigint, ARRAY[1, 2])),
           coalesce(array_agg(ARRAY[a.k[1], a.k[2]] ORDER BY h.ordinality), array_fill(NULL::bigint, ARRAY[1, 2]))
      INTO v_before, v_after
      FROM unnest(v_ranked) WITH ORDINALITY h
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
                      AND d.message_key <> ALL (v_context)
                      AND (NOT d.has_lineage OR NOT history._lineage_blocked(d.message_key, v_audience_convs, v_audience_visible, v_audience))
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
                      AND d.message_key <> ALL (v_context)
                      AND (NOT d.has_lineage OR NOT history._lineage_blocked(d.message_key, v_audience_convs, v_audience_visible, v_audience))
                    ORDER BY d.sent_at, d.message_id
                    LIMIT 2) d
               WHERE upper_inf(w) OR upper(w) > h.sent_at
               ORDER BY d.sent_at, d.message_id
               LIMIT 2) n) AS k) a;
    v_wanted := ARRAY(SELECT r.message_key FROM unnest(v_ranked) r)
                || ARRAY(SELECT x FROM unnest(v_before || v_after) x WHERE x IS NOT NULL);

    -- 7. Recheck against canonical events (and hold them: FOR SHARE makes a
    --    concurrent delete wait for this transaction); note prior evidence.
    SELECT coalesce(array_agg(k), '{}') INTO v_alive
      FROM (SELECT m.message_key AS k
              FROM history.messages m
              JOIN history.message_events e ON e.event_key = m.current_event_key
             WHERE m.message_key = ANY (v_wanted) AND e.event_kind <> 'deleted'
               FOR SHARE OF m) s;
    SELECT coalesce(array_agg(ev.message_key), '{}') INTO v_prior
      FROM history.run_evidence ev WHERE ev.run_key = v_run.run_key AND ev.message_key = ANY (v_wanted);

    -- 8. Admission in rank order while the budget lasts; a message the run
    --    already holds costs nothing. Neighbours in order before1, after1, before2, after2.
    v_remaining := c_budget - v_run.evidence_count;
    FOR i IN 1 .. cardinality(v_ranked) LOOP
        v_hit := v_ranked[i];
        IF v_hit.message_key <> ALL (v_alive) THEN
            v_dead := v_dead + 1;
            CONTINUE;
        END IF;
        IF v_hit.message_key <> ALL (v_prior || v_selected) THEN
            IF v_remaining = 0 THEN
                v_withheld := true;
                v_budget_out := v_budget_out + 1;
                CONTINUE;
            END IF;
            v_remaining := v_remaining - 1;
            v_new := v_new || v_hit.message_key;
        END IF;
        IF v_hit.message_key <> ALL (v_selected) THEN
            v_selected := v_selected || v_hit.message_key;
        END IF;
        v_admit_before := '{}';
        v_admit_after := '{}';
        FOREACH v_nb IN ARRAY ARRAY[v_before[i][1], v_after[i][1], v_before[i][2], v_after[i][2]] LOOP
            CONTINUE WHEN v_nb IS NULL OR v_nb <> ALL (v_alive);
            IF v_nb <> ALL (v_prior || v_selected) THEN
                IF v_remaining = 0 THEN
                    v_withheld := true;
                    CONTINUE;
                END IF;
                v_remaining := v_remaining - 1;
                v_new := v_new || v_nb;
            END IF;
            IF v_nb <> ALL (v_selected) THEN
                v_selected := v_selected || v_nb;
            END IF;
            IF v_nb IN (v_before[i][1], v_before[i][2]) THEN
                v_admit_before := v_admit_before || v_nb;
            ELSE
                v_admit_after := v_admit_after || v_nb;
            END IF;
        END LOOP;
        v_admitted := v_admitted || jsonb_build_object(
            'rank', i, 'hit', v_hit.message_key, 'before', to_jsonb(v_admit_before), 'after', to_jsonb(v_admit_after));
    END LOOP;
    v_status := CASE WHEN v_remaining = 0 OR v_withheld THEN 'search_budget_exhausted' ELSE 'ok' END;

    -- 9. The audit event first: no evidence exists without it, and if it
    --    cannot be written the whole search fails.
    SELECT * INTO v_key FROM history.query_digest_keys k
     WHERE k.retired_at IS NULL ORDER BY k.digest_key_id DESC LIMIT 1;
    INSERT INTO history.conversation_search_events (
        run_key, agent_key, query_digest, digest_key_id, speaker, sent_after, sent_before, effective_limit,
        query_term_count, hit_message_ids, selected_message_ids, hit_rankings, selections,
        excluded_speaker, excluded_time, excluded_perspective, excluded_audience, excluded_lineage,
        excluded_alive, excluded_in_context, excluded_budget, candidates_capped, status, budget_used, budget_remaining)
    SELECT v_run.run_key, v_run.agent_key,
           history._hmac_sha256(convert_to(history._normalise_query(p_query), 'UTF8'), v_key.secret),
           v_key.digest_key_id, v_speaker, p_after, p_before, v_limit, cardinality(v_terms),
           ARRAY(SELECT m.message_id FROM jsonb_array_elements(v_admitted) WITH ORDINALITY a(x, o)
                   JOIN history.messages m ON m.message_key = (a.x->>'hit')::bigint ORDER BY a.o),
           ARRAY(SELECT m.message_id FROM unnest(v_selected) WITH ORDINALITY s(k, o)
                   JOIN history.messages m ON m.message_key = s.k ORDER BY s.o),
           coalesce((SELECT jsonb_agg(jsonb_build_object(
                        'message_id', r.message_id, 'rank', a.o, 'text', r.text_score, 'coverage', r.coverage,
                        'actor', r.actor, 'conversation', r.conversation, 'participation', r.participation,
                        'recency', r.recency, 'named_speaker', r.named_speaker, 'session', r.session,
                        'period', r.period, 'tells_time', r.tells_time, 'total', r.total) ORDER BY a.o)
                       FROM jsonb_array_elements(v_admitted) WITH ORDINALITY a(x, o)
                       JOIN unnest(v_ranked) r ON r.message_key = (a.x->>'hit')::bigint), '[]'),
           coalesce((SELECT jsonb_agg(sel.obj ORDER BY sel.o, sel.p)
                       FROM jsonb_array_elements(v_admitted) WITH ORDINALITY a(x, o)
                       CROSS JOIN LATERAL (
                           SELECT a.o, 0 AS p, jsonb_build_object('message_id', h.message_id, 'role', 'hit',
                                                                  'hit_message_id', h.message_id) AS obj
                             FROM history.messages h WHERE h.message_key = (a.x->>'hit')::bigint
                           UNION ALL
                           SELECT a.o, n.p, jsonb_build_object('message_id', m.message_id, 'role', n.side,
                                                               'hit_message_id', h.message_id)
                             FROM history.messages h,
                                  LATERAL (SELECT 'before' AS side, b.k::bigint AS k, b.p
                                             FROM jsonb_array_elements_text(a.x->'before') WITH ORDINALITY b(k, p)
                                           UNION ALL
                                           SELECT 'after', f.k::bigint, f.p + 2
                                             FROM jsonb_array_elements_text(a.x->'after') WITH ORDINALITY f(k, p)) n
                             JOIN history.messages m ON m.message_key = n.k
                            WHERE h.message_key = (a.x->>'hit')::bigint) sel), '[]'),
           coalesce((v_exclusions->>'speaker')::int, 0), coalesce((v_exclusions->>'time')::int, 0),
           coalesce((v_exclusions->>'perspective')::int, 0), coalesce((v_exclusions->>'audience')::int, 0),
           coalesce((v_exclusions->>'lineage')::int, 0), v_dead,
           coalesce((v_exclusions->>'in_context')::int, 0), v_budget_out, v_capped,
           v_status, v_run.evidence_count + cardinality(v_new), v_remaining
    RETURNING event_key, search_event_id INTO v_event_key, v_event_id;

    -- 10. Evidence (with the proofs each message relied on), the run's count, the trace.
    INSERT INTO history.run_evidence AS ev (run_key, message_key, event_key, proof_keys)
    SELECT v_run.run_key, s.k, v_event_key, history._relied_proofs(s.k, v_audience, v_run.requester_key)
      FROM unnest(v_selected) s(k)
    ON CONFLICT (run_key, message_key, tenant_key) DO UPDATE
       SET proof_keys = ARRAY(SELECT DISTINCT p FROM unnest(ev.proof_keys || excluded.proof_keys) p ORDER BY p);
    UPDATE history.runs
       SET evidence_count = evidence_count + cardinality(v_new), search_count = search_count + 1
     WHERE run_key = v_run.run_key;
    INSERT INTO history.run_trace (run_key, entry_kind, event_key, detail)
    VALUES (v_run.run_key, 'search_audit', v_event_key,
            jsonb_build_object('search_event_id', v_event_id, 'status', v_status,
                               'hits', jsonb_array_length(v_admitted), 'selected', cardinality(v_selected)));

    -- 11. The result, with text loaded from canonical events, each body cut to
    --     max_returned_body_bytes (SPEC §3, "Size": at most 1 MB a search).
    SELECT coalesce(array_agg(ROW(
               h.message_id, h.conversation_id, h.sent_at, h.speaker_id, h.speaker_role, h.body, r.total,
               jsonb_build_object('text', r.text_score, 'coverage', r.coverage, 'actor', r.actor,
                                  'conversation', r.conversation, 'participation', r.participation,
                                  'recency', r.recency, 'named_speaker', r.named_speaker, 'session', r.session,
                                  'period', r.period, 'tells_time', r.tells_time, 'total', r.total,
                                  -- positions in v_terms: the stored hits hold no query word
                                  'matched_terms', to_jsonb(ARRAY(SELECT array_position(v_terms, t)
                                                                    FROM unnest(r.matched_terms) t))),
               coalesce((SELECT jsonb_agg(history._message_json(b.k::bigint, v_run.agent_key, v_requester_accounts,
                                                            v_settings.max_returned_body_bytes) ORDER BY b.p)
                           FROM jsonb_array_elements_text(a.x->'before') WITH ORDINALITY b(k, p)), '[]'),
               coalesce((SELECT jsonb_agg(history._message_json(f.k::bigint, v_run.agent_key, v_requester_accounts,
                                                            v_settings.max_returned_body_bytes) ORDER BY f.p)
                           FROM jsonb_array_elements_text(a.x->'after') WITH ORDINALITY f(k, p)), '[]'),
               h.body_truncated
           )::history.search_hit ORDER BY a.o), '{}')
      INTO v_hits
      FROM jsonb_array_elements(v_admitted) WITH ORDINALITY a(x, o)
      JOIN unnest(v_ranked) r ON r.message_key = (a.x->>'hit')::bigint
      CROSS JOIN LATERAL (SELECT history._message_json(r.message_key, v_run.agent_key, v_requester_accounts,
                                                       v_settings.max_returned_body_bytes) AS j) m
      CROSS JOIN LATERAL (SELECT m.j->>'message_id' AS message_id, m.j->>'conversation_id' AS conversation_id,
                                 (m.j->>'sent_at')::timestamptz AS sent_at, m.j->>'speaker_id' AS speaker_id,
                                 m.j->>'speaker_role' AS speaker_role, m.j->>'body' AS body,
                                 (m.j->>'body_truncated')::boolean AS body_truncated) h;

    -- 12. The hits wait for history._search_reveal, which hands them out once
    --     this transaction has committed and its commit is flushed. This
    --     commit is synchronous whatever the caller set, so in the procedure
    --     the reveal need not wait (set_config, not a SET clause: it lasts
    --     until the transaction ends).
    INSERT INTO history.search_reveals (search_event_id, tenant_key, run_key, written_by, languages, max_terms, hits)
    VALUES (v_event_id, v_run.tenant_key, v_run.run_key, pg_current_xact_id(), v_languages,
            v_settings.max_query_terms, v_hits);
    PERFORM set_config('synchronous_commit', 'on', true);
    IF NOT (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = session_user) THEN
        v_hits := '{}';
    ELSE
        -- A superuser session (tests, a DBA investigating) could read the
        -- tables anyway: it gets the hits here, matched terms as words.
        -- (field by field: a field added to search_hit needs no change here)
        FOR i IN 1 .. coalesce(cardinality(v_hits), 0) LOOP
            v_hit_out := v_hits[i];
            v_hit_out.reasons := jsonb_set(v_hit_out.reasons, '{matched_terms}',
                coalesce((SELECT jsonb_agg(v_terms[t.position::int] ORDER BY t.o)
                            FROM jsonb_array_elements_text(v_hit_out.reasons->'matched_terms') WITH ORDINALITY t(position, o)),
                         '[]'));
            v_hits[i] := v_hit_out;
        END LOOP;
    END IF;

    RETURN ROW(v_status, v_event_id, v_run.evidence_count + cardinality(v_new), v_remaining, v_hits)::history.search_result;
END
$function$;

COMMENT ON FUNCTION history._search_history(uuid, text, text, timestamptz, timestamptz, integer) IS
    'Internal: the search behind CALL history.search_history (hits are revealed by _search_reveal once committed)';
REVOKE ALL ON FUNCTION history._search_history(uuid, text, text, timestamptz, timestamptz, integer) FROM PUBLIC;
-- The procedure runs as its caller, so its callers need EXECUTE here too; step 0
-- refuses a call outside a transaction a procedure began, and no hit leaves
-- here (but to a superuser): history._search_reveal hands them out.
GRANT EXECUTE ON FUNCTION history._search_history(uuid, text, text, timestamptz, timestamptz, integer)
    TO history_searcher, history_runtime;

RESET ROLE;
COMMIT;
