-- Deploy history-search:_run_scope to pg
-- requires: search_stage_types _audience_windows _member_windows tenant_accounts
-- The function lives in db/functions/_run_scope.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _run_scope: what a run's search may see, once per search. Its context (the
-- messages already in its prompt), its audience, the requester and the
-- accounts linked to them, and the conversations and windows the passes
-- search in. The agent's conversations are listed only when they are few (an
-- array the planner can use); an agent in thousands of them is tested by
-- membership lookups instead, and its windows are only ever built for the
-- conversations a pass touches. With an audience, the eligible windows are
-- the audience's windows (few: _audience_windows starts from its rarest
-- readers) cut down to the agent's; without one they are the agent's own,
-- built lazily.
CREATE OR REPLACE FUNCTION history._run_scope(p_run history.runs)
RETURNS history._search_scope
LANGUAGE plpgsql
STABLE
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    -- Agents in more conversations than this are tested by membership lookups.
    c_listed_conversations CONSTANT integer := 5000;
    v_scope history._search_scope;
BEGIN
    v_scope.agent_key := p_run.agent_key;
    v_scope.conversation_key := p_run.conversation_key;
    v_scope.context := p_run.loaded_message_keys || p_run.current_message_key;
    v_scope.audience := p_run.audience_keys;
    v_scope.requester_accounts := ARRAY(
        SELECT a.account_key FROM history.accounts a
         WHERE a.tenant_key = p_run.tenant_key
           AND a.component_key = (SELECT r.component_key FROM history.accounts r
                                   WHERE r.account_key = p_run.requester_key AND r.tenant_key = p_run.tenant_key));
    v_scope.audience_conversations := '{}';
    v_scope.audience_windows := '{}';
    v_scope.eligible_conversations := '{}';
    v_scope.eligible_windows := '{}';

    SELECT CASE WHEN count(*) <= c_listed_conversations THEN coalesce(array_agg(m.conversation_key), '{}') END
      INTO v_scope.agent_conversations
      FROM (SELECT DISTINCT m.conversation_key FROM history.memberships m
             WHERE m.account_key = p_run.agent_key LIMIT c_listed_conversations + 1) m;
    IF cardinality(v_scope.audience) > 0 THEN
        SELECT coalesce(array_agg(w.conversation_key), '{}'), coalesce(array_agg(w.visible), '{}')
          INTO v_scope.audience_conversations, v_scope.audience_windows
          FROM history._audience_windows(v_scope.audience, NULL) w;
        SELECT coalesce(array_agg(u.conversation_key), '{}'), coalesce(array_agg(a.visible * u.visible), '{}')
          INTO v_scope.eligible_conversations, v_scope.eligible_windows
          FROM unnest(v_scope.audience_conversations, v_scope.audience_windows) u(conversation_key, visible)
          JOIN history._member_windows(p_run.agent_key, v_scope.audience_conversations) a
            ON a.conversation_key = u.conversation_key
         WHERE NOT isempty(a.visible * u.visible);
    END IF;
    RETURN v_scope;
END
$function$;

COMMENT ON FUNCTION history._run_scope(history.runs) IS
    'Internal: what a run''s search may see: context, audience, requester accounts, conversations and windows';
REVOKE ALL ON FUNCTION history._run_scope(history.runs) FROM PUBLIC;

RESET ROLE;
COMMIT;
