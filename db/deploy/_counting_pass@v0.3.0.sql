-- Deploy history-search:_counting_pass to pg
-- requires: search_stage_types _newest_matches _ineligible_by _member_windows
-- The function lives in db/functions/_counting_pass.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _counting_pass: the search's counting stage. The newest p_max matches of
-- p_query in the agent's conversations at any time (history._newest_matches;
-- one more is read to tell whether there were more), each counted under the
-- first rule that removes it: the speaker filter (p_speaker: 'requester'
-- keeps what the requester or a linked account wrote, 'you' what the agent
-- wrote), the time filter [p_after, p_before), then eligibility's
-- perspective and audience (history._ineligible_by). Lineage and context are
-- counted by the ranking pass (history._ranking_pass), not looked up here.
-- Run under plan_cache_mode = force_custom_plan (the caller's).
CREATE OR REPLACE FUNCTION history._counting_pass(
    p_scope history._search_scope, p_query tsquery, p_speaker text, p_after timestamptz, p_before timestamptz,
    p_max integer)
RETURNS history._counting_pass
LANGUAGE plpgsql
VOLATILE  -- it calls _newest_matches, which asks EXPLAIN and switches planner settings
SET search_path = pg_catalog, history, pg_temp
AS $function$
DECLARE
    v_result history._counting_pass;
BEGIN
    WITH newest AS MATERIALIZED (
        SELECT n.message_key, n.conversation_key, n.author_key, n.sent_at,
               row_number() OVER (ORDER BY n.sent_at DESC, n.message_id DESC) AS position
          FROM history._newest_matches(p_query, p_scope.agent_key, p_scope.agent_conversations,
                                       p_windows => NULL, p_member_windows => false,  -- at any time: it counts the rest
                                       p_authors => NULL, p_after => NULL, p_before => NULL,
                                       p_count => p_max + 1) n
    ), agent_windows AS (
        SELECT * FROM history._member_windows(p_scope.agent_key, ARRAY(SELECT DISTINCT conversation_key FROM newest))
    ), classified AS (
        SELECT CASE
                 WHEN p_speaker = 'requester' AND c.author_key <> ALL (p_scope.requester_accounts) THEN 'speaker'
                 WHEN p_speaker = 'you' AND c.author_key <> p_scope.agent_key THEN 'speaker'
                 WHEN c.sent_at < p_after OR c.sent_at >= p_before THEN 'time'
                 ELSE history._ineligible_by(c.message_key, c.sent_at, p_has_lineage => false,
                                             p_agent_visible => aw.visible, p_audience_visible => au.visible,
                                             p_audience => p_scope.audience, p_window_conversations => '{}',
                                             p_windows => '{}', p_context => '{}')
               END AS rule
          FROM newest c
          JOIN agent_windows aw ON aw.conversation_key = c.conversation_key
          LEFT JOIN unnest(p_scope.audience_conversations, p_scope.audience_windows) au(conversation_key, visible)
                 ON au.conversation_key = c.conversation_key
         WHERE c.position <= p_max
    )
    SELECT count(*) FILTER (WHERE rule = 'speaker'), count(*) FILTER (WHERE rule = 'time'),
           count(*) FILTER (WHERE rule = 'perspective'), count(*) FILTER (WHERE rule = 'audience'),
           (SELECT count(*) FROM newest) > p_max
      INTO v_result.excluded_speaker, v_result.excluded_time, v_result.excluded_perspective,
           v_result.excluded_audience, v_result.capped
      FROM classified;
    RETURN v_result;
END
$function$;

COMMENT ON FUNCTION history._counting_pass(history._search_scope, tsquery, text, timestamptz, timestamptz, integer) IS
    'Internal: the search''s counting stage: the newest matches counted under speaker, time, perspective, audience';
REVOKE ALL ON FUNCTION history._counting_pass(history._search_scope, tsquery, text, timestamptz, timestamptz, integer) FROM PUBLIC;

RESET ROLE;
COMMIT;
