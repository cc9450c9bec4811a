-- Revert history-search:_search_hits from pg: back to its @v0.3.0 version.
-- The signature changed (it takes the tenant): drop the new function first.
-- SQL-language bodies of the old version may call functions reverted later
-- (in the old signatures): their bodies are checked when they run.
BEGIN;
SET LOCAL ROLE history_owner;
DROP FUNCTION history._search_hits(integer, history._admission, history._ranked_candidate[], text[], bigint, bigint[], integer);
RESET ROLE;
COMMIT;

SET check_function_bodies = off;
-- Deploy history-search:_search_hits to pg
-- requires: search_stage_types _message_json
-- The function lives in db/functions/_search_hits.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _search_hits: the search's result stage. The admitted hits in rank order,
-- each with its reasons and its neighbours, text loaded from canonical events
-- (never from the search projection) and each body cut to p_max_body_bytes.
-- A hit's matched terms are positions in p_terms: the hits stored for the
-- reveal hold no query word.
CREATE OR REPLACE FUNCTION history._search_hits(
    p_admission history._admission, p_ranked history._ranked_candidate[], p_terms text[],
    p_agent_key bigint, p_requester_accounts bigint[], p_max_body_bytes integer)
RETURNS history.search_hit[]
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
BEGIN
    RETURN (
        SELECT coalesce(array_agg(ROW(
                   h.message_id, h.conversation_id, h.sent_at, h.speaker_id, h.speaker_role, h.body, r.total,
                   jsonb_build_object('text', r.text_score, 'coverage', r.coverage, 'actor', r.actor,
                                      'conversation', r.conversation, 'participation', r.participation,
                                      'recency', r.recency, 'named_speaker', r.named_speaker, 'session', r.session,
                                      'period', r.period, 'tells_time', r.tells_time, 'total', r.total,
                                      -- positions in p_terms: the stored hits hold no query word
                                      'matched_terms', to_jsonb(ARRAY(SELECT array_position(p_terms, t)
                                                                        FROM unnest(r.matched_terms) t))),
                   coalesce((SELECT jsonb_agg(history._message_json(b.k, p_agent_key, p_requester_accounts,
                                                                p_max_body_bytes) ORDER BY b.p)
                               FROM unnest(a.before) WITH ORDINALITY b(k, p)), '[]'),
                   coalesce((SELECT jsonb_agg(history._message_json(f.k, p_agent_key, p_requester_accounts,
                                                                p_max_body_bytes) ORDER BY f.p)
                               FROM unnest(a.after) WITH ORDINALITY f(k, p)), '[]'),
                   h.body_truncated
               )::history.search_hit ORDER BY a.o), '{}')
          FROM unnest(p_admission.hits) WITH ORDINALITY a(rank, message_key, before, after, o)
          JOIN unnest(p_ranked) r ON r.message_key = a.message_key
          CROSS JOIN LATERAL (SELECT history._message_json(r.message_key, p_agent_key, p_requester_accounts,
                                                           p_max_body_bytes) AS j) m
          CROSS JOIN LATERAL (SELECT m.j->>'message_id' AS message_id, m.j->>'conversation_id' AS conversation_id,
                                     (m.j->>'sent_at')::timestamptz AS sent_at, m.j->>'speaker_id' AS speaker_id,
                                     m.j->>'speaker_role' AS speaker_role, m.j->>'body' AS body,
                                     (m.j->>'body_truncated')::boolean AS body_truncated) h);
END
$function$;

COMMENT ON FUNCTION history._search_hits(history._admission, history._ranked_candidate[], text[], bigint, bigint[], integer) IS
    'Internal: the search''s result stage: admitted hits with reasons and neighbours, text from canonical events';
REVOKE ALL ON FUNCTION history._search_hits(history._admission, history._ranked_candidate[], text[], bigint, bigint[], integer) FROM PUBLIC;

RESET ROLE;
COMMIT;
RESET check_function_bodies;
