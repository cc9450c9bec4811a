-- _ineligible_by, alone: eligibility's rules in their order, the first one a
-- message fails (NULL: eligible).
BEGIN;
SELECT plan(8);

-- One window for the agent, a narrower one for the audience; a DM the
-- audience cannot read, and two messages, one drawn from it.
DO $world$
BEGIN
    PERFORM history.upsert_account('ie-bot', 'agent');
    PERFORM history.upsert_account('ie-ann', 'person');
    PERFORM history.upsert_account('ie-ben', 'person');
    PERFORM history.upsert_conversation('ie-g', 'group');
    PERFORM history.upsert_conversation('ie-dm', 'direct');
    PERFORM history.add_member('ie-dm', 'ie-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('ie-dm', 'ie-ben', '2026-01-01 00:00+00');
    PERFORM history.add_member('ie-g', 'ie-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('ie-g', 'ie-ann', '2026-01-01 00:00+00');
    PERFORM history.post_message('ie-secret', 'ie-dm', 'ie-ben', 'secret', '2026-01-05 00:00+00');
    PERFORM history.post_message('ie-drawn', 'ie-g', 'ie-bot', 'drawn', '2026-01-06 00:00+00', ARRAY['ie-secret']);
    PERFORM history.post_message('ie-plain', 'ie-g', 'ie-ann', 'plain', '2026-01-07 00:00+00');
END
$world$;

CREATE TEMP TABLE w ON COMMIT DROP AS
SELECT ARRAY[(SELECT account_key FROM history.accounts WHERE account_id = 'ie-ann')] AS audience,
       array_agg(a.conversation_key) AS convs, array_agg(a.visible) AS windows
  FROM history._audience_windows(1, ARRAY[(SELECT account_key FROM history.accounts WHERE account_id = 'ie-ann')], NULL) a;
CREATE FUNCTION pg_temp.rule(p_id text, p_agent tstzmultirange, p_audience tstzmultirange, p_context text[] DEFAULT '{}')
RETURNS text LANGUAGE sql AS $$
    SELECT history._ineligible_by(d.tenant_key, d.message_key, d.sent_at, d.has_lineage, p_agent, p_audience, w.audience, w.convs, w.windows,
                                  ARRAY(SELECT message_key FROM history.messages WHERE message_id = ANY (p_context)))
      FROM history.message_search_documents d, w WHERE d.message_id = p_id $$;

SELECT is(pg_temp.rule('ie-plain', '{[2026-01-01,)}', '{[2026-01-01,)}'), NULL, 'inside both windows, no lineage, not in context: eligible');
SELECT is(pg_temp.rule('ie-plain', '{[2026-01-08,)}', '{[2026-01-01,)}'), 'perspective', 'outside the agent''s window: perspective');
SELECT is(pg_temp.rule('ie-plain', '{[2026-01-08,)}', '{[2026-01-08,)}', ARRAY['ie-plain']), 'perspective',
          'perspective comes first, before audience and context');
SELECT is(pg_temp.rule('ie-plain', '{[2026-01-01,)}', '{[2026-01-08,)}'), 'audience', 'outside the audience''s window: audience');
SELECT is(pg_temp.rule('ie-drawn', '{[2026-01-01,)}', '{[2026-01-01,)}'), 'lineage', 'drawn from a DM the audience cannot read: lineage');
SELECT is(pg_temp.rule('ie-drawn', '{[2026-01-01,)}', '{[2026-01-01,)}', ARRAY['ie-drawn']), 'lineage', 'lineage comes before context');
SELECT is(pg_temp.rule('ie-plain', '{[2026-01-01,)}', '{[2026-01-01,)}', ARRAY['ie-plain']), 'in_context', 'a loaded message: in_context');
SELECT is(history._ineligible_by(d.tenant_key, d.message_key, d.sent_at, d.has_lineage, '{[2026-01-01,)}', NULL, '{}', '{}', '{}', '{}'), NULL,
          'an empty audience restricts nothing beyond perspective (lineage included)')
  FROM history.message_search_documents d WHERE d.message_id = 'ie-drawn';

SELECT * FROM finish();
ROLLBACK;
