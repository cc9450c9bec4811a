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
    v_counts     history._counting_pass;
    v_scope      history._search_scope;
    v_pass       history._ranking_pass;
    v_ranked     history._ranked_candidate[] := '{}';
    v_neighbours history._hit_neighbours[];
    v_wanted     bigint[] := '{}';
    v_alive      bigint[];
    v_prior      bigint[];
    v_admission  history._admission;
    v_remaining  integer;
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

    -- What the run may see, for the stages below.
    v_scope.agent_key := v_run.agent_key;
    v_scope.conversation_key := v_run.conversation_key;
    v_scope.requester_accounts := v_requester_accounts;
    v_scope.audience := v_audience;
    v_scope.context := v_context;
    v_scope.agent_conversations := v_agent_convs;
    v_scope.audience_conversations := v_audience_convs;
    v_scope.audience_windows := v_audience_visible;
    v_scope.eligible_conversations := v_eligible_convs;
    v_scope.eligible_windows := v_eligible_visible;

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
    --    and ranks the rest. When it reached its cap and removed some, it is
    --    read again with lineage and context tested inside the scan (every
    --    rule applies before the cap), keeping the counts of the first read.
    --    One more row than the cap is read to tell whether the cap was reached.
    IF v_query IS NOT NULL THEN
        v_counts := history._counting_pass(v_scope, v_query, v_speaker, p_after, p_before,
                                           v_settings.max_counted_candidates);
        v_capped := v_counts.capped;

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
        v_pass := history._ranking_pass(
            v_scope, v_query, v_terms, v_name_terms, v_named_authors,
            CASE v_speaker WHEN 'requester' THEN v_requester_accounts WHEN 'you' THEN ARRAY[v_run.agent_key] END,
            p_after, p_before, v_settings, v_limit,
            history._query_period(p_query, now()), history._query_asks_when(p_query, v_languages), p_refill => false);
        v_capped := v_capped OR v_pass.capped;
        v_ranked := v_pass.ranked;
        IF v_pass.capped AND v_pass.excluded_lineage + v_pass.excluded_in_context > 0 THEN
            v_ranked := (history._ranking_pass(
                v_scope, v_query, v_terms, v_name_terms, v_named_authors,
                CASE v_speaker WHEN 'requester' THEN v_requester_accounts WHEN 'you' THEN ARRAY[v_run.agent_key] END,
                p_after, p_before, v_settings, v_limit,
                history._query_period(p_query, now()), history._query_asks_when(p_query, v_languages),
                p_refill => true)).ranked;
        END IF;
    END IF;
    -- From here on every statement reads a handful of rows by key: plan once.
    PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);

    -- 6. Neighbours (history._hit_neighbours): up to two eligible messages
    --    each side of every hit, nearest first, inside the hit's windows.
    v_neighbours := history._hit_neighbours(v_ranked, v_audience, v_audience_convs, v_audience_visible, v_context);
    v_wanted := ARRAY(SELECT r.message_key FROM unnest(v_ranked) r)
                || ARRAY(SELECT x FROM unnest(v_neighbours) n, unnest(n.before || n.after) x);

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

    -- 8. Admission in rank order while the budget lasts (history._admit_hits).
    v_admission := history._admit_hits(ARRAY(SELECT r.message_key FROM unnest(v_ranked) r), v_neighbours,
                                       v_alive, v_prior, c_budget - v_run.evidence_count);
    v_remaining := v_admission.remaining;
    v_status := CASE WHEN v_remaining = 0 OR v_admission.withheld THEN 'search_budget_exhausted' ELSE 'ok' END;

    -- 9. The audit event first: no evidence exists without it, and if it
    --    cannot be written the whole search fails.
    SELECT * INTO v_key FROM history.query_digest_keys k
     WHERE k.retired_at IS NULL ORDER BY k.digest_key_id DESC LIMIT 1;
    INSERT INTO history.conversation_search_events (
        tenant_key, run_key, agent_key, query_digest, digest_key_id, speaker, sent_after, sent_before, effective_limit,
        query_term_count, hit_message_ids, selected_message_ids, hit_rankings, selections,
        excluded_speaker, excluded_time, excluded_perspective, excluded_audience, excluded_lineage,
        excluded_alive, excluded_in_context, excluded_budget, candidates_capped, status, budget_used, budget_remaining)
    SELECT v_run.tenant_key, v_run.run_key, v_run.agent_key,
           history._hmac_sha256(convert_to(history._normalise_query(p_query), 'UTF8'), v_key.secret),
           v_key.digest_key_id, v_speaker, p_after, p_before, v_limit, cardinality(v_terms),
           ARRAY(SELECT m.message_id FROM unnest(v_admission.hits) WITH ORDINALITY a(rank, message_key, before, after, o)
                   JOIN history.messages m ON m.message_key = a.message_key ORDER BY a.o),
           ARRAY(SELECT m.message_id FROM unnest(v_admission.selected) WITH ORDINALITY s(k, o)
                   JOIN history.messages m ON m.message_key = s.k ORDER BY s.o),
           coalesce((SELECT jsonb_agg(jsonb_build_object(
                        'message_id', r.message_id, 'rank', a.o, 'text', r.text_score, 'coverage', r.coverage,
                        'actor', r.actor, 'conversation', r.conversation, 'participation', r.participation,
                        'recency', r.recency, 'named_speaker', r.named_speaker, 'session', r.session,
                        'period', r.period, 'tells_time', r.tells_time, 'total', r.total) ORDER BY a.o)
                       FROM unnest(v_admission.hits) WITH ORDINALITY a(rank, message_key, before, after, o)
                       JOIN unnest(v_ranked) r ON r.message_key = a.message_key), '[]'),
           coalesce((SELECT jsonb_agg(sel.obj ORDER BY sel.o, sel.p)
                       FROM unnest(v_admission.hits) WITH ORDINALITY a(rank, message_key, before, after, o)
                       CROSS JOIN LATERAL (
                           SELECT a.o, 0 AS p, jsonb_build_object('message_id', h.message_id, 'role', 'hit',
                                                                  'hit_message_id', h.message_id) AS obj
                             FROM history.messages h WHERE h.message_key = a.message_key
                           UNION ALL
                           SELECT a.o, n.p, jsonb_build_object('message_id', m.message_id, 'role', n.side,
                                                               'hit_message_id', h.message_id)
                             FROM history.messages h,
                                  LATERAL (SELECT 'before' AS side, b.k, b.p
                                             FROM unnest(a.before) WITH ORDINALITY b(k, p)
                                           UNION ALL
                                           SELECT 'after', f.k, f.p + 2
                                             FROM unnest(a.after) WITH ORDINALITY f(k, p)) n
                             JOIN history.messages m ON m.message_key = n.k
                            WHERE h.message_key = a.message_key) sel), '[]'),
           coalesce(v_counts.excluded_speaker, 0), coalesce(v_counts.excluded_time, 0),
           coalesce(v_counts.excluded_perspective, 0), coalesce(v_counts.excluded_audience, 0),
           coalesce(v_pass.excluded_lineage, 0), v_admission.dead,
           coalesce(v_pass.excluded_in_context, 0), v_admission.budget_out, v_capped,
           v_status, v_run.evidence_count + cardinality(v_admission.new_keys), v_remaining
    RETURNING event_key, search_event_id INTO v_event_key, v_event_id;

    -- 10. Evidence (with the proofs each message relied on), the run's count, the trace.
    INSERT INTO history.run_evidence AS ev (tenant_key, run_key, message_key, event_key, proof_keys)
    SELECT v_run.tenant_key, v_run.run_key, s.k, v_event_key, history._relied_proofs(s.k, v_audience, v_run.requester_key)
      FROM unnest(v_admission.selected) s(k)
    ON CONFLICT (run_key, message_key, tenant_key) DO UPDATE
       SET proof_keys = ARRAY(SELECT DISTINCT p FROM unnest(ev.proof_keys || excluded.proof_keys) p ORDER BY p);
    UPDATE history.runs
       SET evidence_count = evidence_count + cardinality(v_admission.new_keys), search_count = search_count + 1
     WHERE run_key = v_run.run_key AND tenant_key = v_run.tenant_key;
    INSERT INTO history.run_trace (tenant_key, run_key, entry_kind, event_key, detail)
    VALUES (v_run.tenant_key, v_run.run_key, 'search_audit', v_event_key,
            jsonb_build_object('search_event_id', v_event_id, 'status', v_status,
                               'hits', cardinality(v_admission.hits), 'selected', cardinality(v_admission.selected)));

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
               coalesce((SELECT jsonb_agg(history._message_json(b.k, v_run.agent_key, v_requester_accounts,
                                                            v_settings.max_returned_body_bytes) ORDER BY b.p)
                           FROM unnest(a.before) WITH ORDINALITY b(k, p)), '[]'),
               coalesce((SELECT jsonb_agg(history._message_json(f.k, v_run.agent_key, v_requester_accounts,
                                                            v_settings.max_returned_body_bytes) ORDER BY f.p)
                           FROM unnest(a.after) WITH ORDINALITY f(k, p)), '[]'),
               h.body_truncated
           )::history.search_hit ORDER BY a.o), '{}')
      INTO v_hits
      FROM unnest(v_admission.hits) WITH ORDINALITY a(rank, message_key, before, after, o)
      JOIN unnest(v_ranked) r ON r.message_key = a.message_key
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

    RETURN ROW(v_status, v_event_id, v_run.evidence_count + cardinality(v_admission.new_keys), v_remaining, v_hits)::history.search_result;
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
