-- _record_search: the search's audit stage. Writes the audit event first (no
-- evidence exists without it; if it cannot be written the whole search
-- fails), then the evidence with the proofs each message relied on, the run's
-- count and its trace. The query text goes only into the keyed digest.
-- Returns what the search reports: its status (search_budget_exhausted when
-- nothing is left or something eligible was withheld), the event's id and
-- the run's budget after it.
CREATE OR REPLACE FUNCTION history._record_search(
    p_run history.runs, p_query text, p_speaker text, p_after timestamptz, p_before timestamptz,
    p_limit integer, p_term_count integer, p_counts history._counting_pass, p_pass history._ranking_pass,
    p_ranked history._ranked_candidate[], p_admission history._admission, p_capped boolean, p_audience bigint[],
    OUT status text, OUT search_event_id uuid, OUT budget_used integer, OUT budget_remaining integer)
LANGUAGE plpgsql
VOLATILE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_key       history.query_digest_keys;
    v_event_key bigint;
    v_hit_ids       text[];
    v_selected_ids  text[];
    v_rankings      jsonb;
    v_selections    jsonb;
    v_relied        jsonb;  -- {message_key: [proof_key, ...]}
    v_proofs        jsonb;  -- [[message_key, [proof_key, ...]], ...]
BEGIN
    budget_remaining := p_admission.remaining;
    budget_used := p_run.evidence_count + cardinality(p_admission.new_keys);
    status := CASE WHEN budget_remaining = 0 OR p_admission.withheld THEN 'search_budget_exhausted' ELSE 'ok' END;

    SELECT * INTO v_key FROM history.query_digest_keys k
     WHERE k.retired_at IS NULL ORDER BY k.digest_key_id DESC LIMIT 1;
    -- The event's message ids and selections first, each a statement naming the
    -- run's tenant (on Citus, one shard), then the event as INSERT ... VALUES.
    v_hit_ids := ARRAY(SELECT m.message_id FROM unnest(p_admission.hits) WITH ORDINALITY a(rank, message_key, before, after, o)
                   JOIN history.messages m ON m.message_key = a.message_key AND m.tenant_key = p_run.tenant_key
                  ORDER BY a.o);
    v_selected_ids := ARRAY(SELECT m.message_id FROM unnest(p_admission.selected) WITH ORDINALITY s(k, o)
                   JOIN history.messages m ON m.message_key = s.k AND m.tenant_key = p_run.tenant_key
                  ORDER BY s.o);
    v_rankings := coalesce((SELECT jsonb_agg(jsonb_build_object(
                        'message_id', r.message_id, 'rank', a.o, 'text', r.text_score, 'coverage', r.coverage,
                        'actor', r.actor, 'conversation', r.conversation, 'participation', r.participation,
                        'recency', r.recency, 'named_speaker', r.named_speaker, 'session', r.session,
                        'period', r.period, 'tells_time', r.tells_time, 'window_coverage', r.window_coverage,
                        'feedback', r.feedback, 'total', r.total) ORDER BY a.o)
                       FROM unnest(p_admission.hits) WITH ORDINALITY a(rank, message_key, before, after, o)
                       JOIN unnest(p_ranked) r ON r.message_key = a.message_key), '[]');
    v_selections := coalesce((SELECT jsonb_agg(sel.obj ORDER BY sel.o, sel.p)
                       FROM unnest(p_admission.hits) WITH ORDINALITY a(rank, message_key, before, after, o)
                       CROSS JOIN LATERAL (
                           SELECT a.o, 0 AS p, jsonb_build_object('message_id', h.message_id, 'role', 'hit',
                                                                  'hit_message_id', h.message_id) AS obj
                             FROM history.messages h
                            WHERE h.message_key = a.message_key AND h.tenant_key = p_run.tenant_key
                           UNION ALL
                           SELECT a.o, n.p, jsonb_build_object('message_id', m.message_id, 'role', n.side,
                                                               'hit_message_id', h.message_id)
                             FROM history.messages h,
                                  LATERAL (SELECT 'before' AS side, b.k, b.p
                                             FROM unnest(a.before) WITH ORDINALITY b(k, p)
                                           UNION ALL
                                           SELECT 'after', f.k, f.p + 2
                                             FROM unnest(a.after) WITH ORDINALITY f(k, p)) n
                             JOIN history.messages m ON m.message_key = n.k AND m.tenant_key = p_run.tenant_key
                            WHERE h.message_key = a.message_key AND h.tenant_key = p_run.tenant_key) sel), '[]');
    INSERT INTO history.conversation_search_events (
        tenant_key, run_key, agent_key, query_digest, digest_key_id, speaker, sent_after, sent_before, effective_limit,
        query_term_count, hit_message_ids, selected_message_ids, hit_rankings, selections,
        excluded_speaker, excluded_time, excluded_perspective, excluded_audience, excluded_lineage,
        excluded_alive, excluded_in_context, excluded_budget, candidates_capped, status, budget_used, budget_remaining)
    VALUES (p_run.tenant_key, p_run.run_key, p_run.agent_key,
           history._hmac_sha256(convert_to(history._normalise_query(p_query), 'UTF8'), v_key.secret),
           v_key.digest_key_id, p_speaker, p_after, p_before, p_limit, p_term_count,
           v_hit_ids, v_selected_ids, v_rankings, v_selections,
           coalesce(p_counts.excluded_speaker, 0), coalesce(p_counts.excluded_time, 0),
           coalesce(p_counts.excluded_perspective, 0), coalesce(p_counts.excluded_audience, 0),
           coalesce(p_pass.excluded_lineage, 0), p_admission.dead,
           coalesce(p_pass.excluded_in_context, 0), p_admission.budget_out, p_capped,
           status, budget_used, budget_remaining)
    RETURNING event_key, conversation_search_events.search_event_id INTO v_event_key, search_event_id;

    -- The proofs first, by a statement on no distributed table: on Citus the
    -- insert may not call a function that reads one while it writes.
    v_relied := history._relied_proofs_of(p_run.tenant_key, p_admission.selected, p_audience, p_run.requester_key);
    v_proofs := (SELECT jsonb_agg(jsonb_build_array(s.k, coalesce(v_relied -> s.k::text, '[]')))
                   FROM unnest(p_admission.selected) s(k));
    INSERT INTO history.run_evidence AS ev (tenant_key, run_key, message_key, event_key, proof_keys)
    SELECT p_run.tenant_key, p_run.run_key, (e->>0)::bigint, v_event_key,
           ARRAY(SELECT x::bigint FROM jsonb_array_elements_text(e->1) x)
      FROM jsonb_array_elements(coalesce(v_proofs, '[]')) e
    ON CONFLICT (run_key, message_key, tenant_key) DO UPDATE
       SET proof_keys = ARRAY(SELECT DISTINCT p FROM unnest(ev.proof_keys || excluded.proof_keys) p ORDER BY p);
    UPDATE history.runs
       SET evidence_count = evidence_count + cardinality(p_admission.new_keys), search_count = search_count + 1
     WHERE run_key = p_run.run_key AND tenant_key = p_run.tenant_key;
    INSERT INTO history.run_trace (tenant_key, run_key, entry_kind, event_key, detail)
    VALUES (p_run.tenant_key, p_run.run_key, 'search_audit', v_event_key,
            jsonb_build_object('search_event_id', search_event_id, 'status', status,
                               'hits', cardinality(p_admission.hits), 'selected', cardinality(p_admission.selected)));
END
$function$;

COMMENT ON FUNCTION history._record_search(history.runs, text, text, timestamptz, timestamptz, integer, integer,
                                           history._counting_pass, history._ranking_pass, history._ranked_candidate[],
                                           history._admission, boolean, bigint[]) IS
    'Internal: the search''s audit stage: the audit event, then the evidence, the run''s count and its trace';
REVOKE ALL ON FUNCTION history._record_search(history.runs, text, text, timestamptz, timestamptz, integer, integer,
                                              history._counting_pass, history._ranking_pass, history._ranked_candidate[],
                                              history._admission, boolean, bigint[]) FROM PUBLIC;
