-- Deploy history-search:_search_in_tenant to pg
-- The function lives in db/functions/_search_in_tenant.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _search_in_tenant: the search of one run in its tenant p_tenant, behind
-- history._search_history (which finds the tenant of the run's token and
-- keeps to itself what only the procedure's transaction may do), as a
-- composition of named stages: validate the arguments, lock the run
-- (_lock_open_run), what it may see (_run_scope), the query
-- (_query_analysis), the matches in two bounded passes (_counting_pass
-- counts exclusions, _ranking_pass finds and scores the eligible ones:
-- _newest_matches, _ineligible_by, _score), neighbours (_hit_neighbours),
-- admission within the run's 400-message budget (_admit_hits), the audit
-- event, evidence and trace (_record_search), the result (_search_hits); the
-- hits are kept for history._reveal_in_tenant, which hands them out once
-- this transaction has committed (docs/decisions.md, "Audit before reveal").
-- The query text is used for matching and for the keyed digest only; it is
-- never stored, echoed in an error or sent in a notice.
--
-- On Citus `history-search distribute` delegates it by p_tenant (docs/scale-out.md,
-- "The search on Citus"): the call runs on the worker holding the tenant,
-- where every statement below names the tenant and is local. Executable by
-- the owner alone (history._search_history calls it).
CREATE OR REPLACE FUNCTION history._search_in_tenant(
    p_tenant  integer,
    p_run     uuid,
    p_query   text,
    p_speaker text,
    p_after   timestamptz,
    p_before  timestamptz,
    p_limit   integer
) RETURNS history.search_result
LANGUAGE plpgsql
SECURITY INVOKER  -- the owner alone may call it: its callers are definers
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
    v_speaker    text := coalesce(p_speaker, 'anyone');
    v_limit      integer;
    v_run        history.runs;
    v_settings   history.search_settings;
    v_terms      text[];
    v_query      tsquery;
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
    v_recorded   record;
    v_hits       history.search_hit[];
    v_hit_out    history.search_hit;
    i            integer;
BEGIN
    -- Compiled in the search's transaction (the node's first compile may prune
    -- catalog pages: WAL this search's synchronous commit flushes, not WAL the
    -- reveal waits for).
    PERFORM history._reveal_in_tenant(p_tenant, NULL, NULL, NULL);

    -- 1. Arguments, before any other work (history._check_search_arguments).
    SELECT * INTO v_settings FROM history.search_settings;
    v_limit := history._check_search_arguments(p_query, p_speaker, p_after, p_before, p_limit,
                                               v_settings.max_query_chars);

    -- 2. The run, locked by an UPDATE: concurrent searches of one run queue
    --    here, and a REPEATABLE READ caller that lost the race gets 40001.
    v_run := history._lock_open_run(p_run);
    IF v_run.tenant_key IS DISTINCT FROM p_tenant THEN  -- run_tokens and runs disagree: never silently
        RAISE EXCEPTION 'run % is not in tenant key %', history._run_label(p_run), p_tenant USING ERRCODE = 'internal_error';
    END IF;
    -- Steps 4 and 5 are planned for this search's terms, audience and windows
    -- (a generic plan cannot tell a rare term from one in every message).
    -- SET LOCAL inside a function with a SET clause ends with the function.
    PERFORM set_config('plan_cache_mode', 'force_custom_plan', true);

    -- 4. What the run may see (history._run_scope): its context, audience,
    --    the requester's linked accounts and the conversations and windows
    --    the passes below search in.
    v_scope := history._run_scope(v_run);

    -- 3. (After the windows, whose conversations it needs.) The query,
    --    analysed as documents are (docs/text-analysis.md), in the default
    --    language and those of the destination and of the conversations this
    --    run may search, never another's (what the run may not see never
    --    changes how the query is read): its terms (distinct lexemes, first
    --    seen first) and the tsquery a message must match (the OR of its
    --    alternatives; a typed identifier matches whole or where all its
    --    parts occur). Typed operators are never parsed.
    v_languages := history._visible_languages(
        v_run.tenant_key, v_run.agent_key, CASE WHEN cardinality(v_scope.audience) > 0 THEN v_scope.eligible_conversations ELSE v_scope.agent_conversations END,
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

        -- The query's terms that name people of this run, and those people.
        SELECT n.name_terms, n.named_authors INTO v_name_terms, v_named_authors
          FROM history._query_names(v_run.tenant_key, v_terms, v_scope.audience || v_scope.requester_accounts || v_run.agent_key,
                                    v_languages) n;
        v_pass := history._ranking_pass(
            v_scope, v_query, v_terms, v_name_terms, v_named_authors,
            CASE v_speaker WHEN 'requester' THEN v_scope.requester_accounts WHEN 'you' THEN ARRAY[v_run.agent_key] END,
            p_after, p_before, v_settings, v_limit,
            history._query_period(p_query, now()), history._query_asks_when(p_query, v_languages), p_refill => false);
        v_capped := v_capped OR v_pass.capped;
        v_ranked := v_pass.ranked;
        IF v_pass.capped AND v_pass.excluded_lineage + v_pass.excluded_in_context > 0 THEN
            v_ranked := (history._ranking_pass(
                v_scope, v_query, v_terms, v_name_terms, v_named_authors,
                CASE v_speaker WHEN 'requester' THEN v_scope.requester_accounts WHEN 'you' THEN ARRAY[v_run.agent_key] END,
                p_after, p_before, v_settings, v_limit,
                history._query_period(p_query, now()), history._query_asks_when(p_query, v_languages),
                p_refill => true)).ranked;
        END IF;
    END IF;
    -- From here on every statement reads a handful of rows by key: plan once.
    -- Not on Citus: it routes a statement that joins unnest() rows to a
    -- distributed table only when planned for the tenant's value.
    IF current_setting('citus.version', true) IS NULL THEN
        PERFORM set_config('plan_cache_mode', 'force_generic_plan', true);
    END IF;

    -- 6. Neighbours (history._hit_neighbours): up to two eligible messages
    --    each side of every hit, nearest first, inside the hit's windows.
    v_neighbours := history._hit_neighbours(v_run.tenant_key, v_ranked, v_scope.audience, v_scope.audience_conversations, v_scope.audience_windows, v_scope.context);
    v_wanted := ARRAY(SELECT r.message_key FROM unnest(v_ranked) r)
                || ARRAY(SELECT x FROM unnest(v_neighbours) n, unnest(n.before || n.after) x);

    -- 7. Recheck against canonical events (and hold them: FOR SHARE makes a
    --    concurrent delete wait for this transaction); note prior evidence.
    SELECT coalesce(array_agg(k), '{}') INTO v_alive
      FROM (SELECT m.message_key AS k
              FROM history.messages m
              JOIN history.message_events e ON e.event_key = m.current_event_key AND e.tenant_key = v_run.tenant_key
             WHERE m.message_key = ANY (v_wanted) AND m.tenant_key = v_run.tenant_key AND e.event_kind <> 'deleted'
               FOR SHARE OF m) s;
    SELECT coalesce(array_agg(ev.message_key), '{}') INTO v_prior
      FROM history.run_evidence ev
     WHERE ev.run_key = v_run.run_key AND ev.tenant_key = v_run.tenant_key AND ev.message_key = ANY (v_wanted);

    -- 8. Admission in rank order while the budget lasts (history._admit_hits).
    v_admission := history._admit_hits(ARRAY(SELECT r.message_key FROM unnest(v_ranked) r), v_neighbours,
                                       v_alive, v_prior, c_budget - v_run.evidence_count);

    -- 9. The audit event, then the evidence, the run's count and its trace
    --    (history._record_search): no evidence exists without the event, and
    --    if it cannot be written the whole search fails.
    v_recorded := history._record_search(v_run, p_query, v_speaker, p_after, p_before, v_limit, cardinality(v_terms),
                                         v_counts, v_pass, v_ranked, v_admission, v_capped, v_scope.audience);

    -- 10. The result (history._search_hits): text from canonical events, each
    --     body cut to max_returned_body_bytes (at most 1 MB a search).
    v_hits := history._search_hits(v_run.tenant_key, v_admission, v_ranked, v_terms, v_run.agent_key, v_scope.requester_accounts,
                                   v_settings.max_returned_body_bytes);

    -- 11. The hits wait for history._reveal_in_tenant, which hands them out once
    --     this transaction has committed and its commit is flushed. This
    --     commit is synchronous whatever the caller set, so in the procedure
    --     the reveal need not wait (set_config, not a SET clause: it lasts
    --     until the transaction ends).
    INSERT INTO history.search_reveals (search_event_id, tenant_key, run_key, written_by, languages, max_terms, hits)
    VALUES (v_recorded.search_event_id, v_run.tenant_key, v_run.run_key, pg_current_xact_id(), v_languages,
            v_settings.max_query_terms, v_hits);
    PERFORM set_config('synchronous_commit', 'on', true);
    -- The hits as they are stored, matched terms as words: history._search_history
    -- passes them on to a superuser session only (tests, a DBA investigating).
    -- (field by field: a field added to search_hit needs no change here)
    FOR i IN 1 .. coalesce(cardinality(v_hits), 0) LOOP
        v_hit_out := v_hits[i];
        v_hit_out.reasons := jsonb_set(v_hit_out.reasons, '{matched_terms}',
            coalesce((SELECT jsonb_agg(v_terms[t.position::int] ORDER BY t.o)
                        FROM jsonb_array_elements_text(v_hit_out.reasons->'matched_terms') WITH ORDINALITY t(position, o)),
                     '[]'));
        v_hits[i] := v_hit_out;
    END LOOP;

    RETURN ROW(v_recorded.status, v_recorded.search_event_id, v_recorded.budget_used, v_recorded.budget_remaining,
               v_hits)::history.search_result;
END
$function$;

COMMENT ON FUNCTION history._search_in_tenant(integer, uuid, text, text, timestamptz, timestamptz, integer) IS
    'Internal: the search of a run in its tenant (delegated to the tenant''s worker on Citus), behind history._search_history';
REVOKE ALL ON FUNCTION history._search_in_tenant(integer, uuid, text, text, timestamptz, timestamptz, integer) FROM PUBLIC;

RESET ROLE;
COMMIT;
