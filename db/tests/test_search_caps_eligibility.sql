-- Caps bound work, never eligibility: every rule of who may see what
-- (perspective, audience, lineage, alive, not in context) applies before the
-- ranking cap. Newer matches whose lineage the audience may not see, or that
-- are already in the run's context, never fill the cap and hide an eligible
-- older match; each strategy of _newest_matches skips them before counting.
BEGIN;
SELECT plan(14);

-- The agent is in group #g with ann (the run's audience) and in a direct
-- conversation with ben that ann cannot read. 2 100 newer matches in #g drew
-- on that direct message; two older matches in #g are eligible.
DO $world$
DECLARE
    k integer;
BEGIN
    PERFORM history.upsert_account('ce-bot', 'agent');
    PERFORM history.upsert_account('ce-ann', 'person');
    PERFORM history.upsert_account('ce-ben', 'person');
    PERFORM history.upsert_conversation('ce-g', 'group');
    PERFORM history.upsert_conversation('ce-dm', 'direct');
    PERFORM history.add_member('ce-g', 'ce-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('ce-g', 'ce-ann', '2026-01-01 00:00+00');
    PERFORM history.add_member('ce-dm', 'ce-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('ce-dm', 'ce-ben', '2026-01-01 00:00+00');
    PERFORM history.post_message('ce-ok-1', 'ce-g', 'ce-ann', 'apricot harvest', '2026-01-10 12:00+00');
    PERFORM history.post_message('ce-ok-2', 'ce-g', 'ce-ann', 'apricot jam', '2026-01-11 12:00+00');
    PERFORM history.post_message('ce-secret', 'ce-dm', 'ce-ben', 'the apricot secret', '2026-01-12 12:00+00');
    FOR k IN 1 .. 2100 LOOP
        PERFORM history.post_message(format('ce-x-%s', k), 'ce-g', 'ce-bot', 'apricot again',
                                     timestamptz '2026-01-13 00:00+00' + k * interval '1 minute', ARRAY['ce-secret']);
    END LOOP;
    PERFORM history.post_message('ce-cur', 'ce-g', 'ce-ann', 'what about it?', '2026-03-01 12:00+00');
END
$world$;
ANALYZE history.message_search_documents;

CREATE TEMP TABLE result ON COMMIT DROP AS
SELECT history._search_history(history.begin_run('ce-bot', 'ce-g', 'ce-ann', 'ce-cur'), 'apricot', p_limit => 20) AS r;
CREATE FUNCTION pg_temp.hits() RETURNS text[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(h.message_id ORDER BY h.message_id), '{}') FROM pg_temp.result x, unnest((x.r).hits) h $$;

SELECT is(pg_temp.hits(), ARRAY['ce-ok-1', 'ce-ok-2'],
          '2 100 newer matches whose lineage the audience cannot see do not hide the two eligible older ones');
SELECT is((SELECT a.excluded_lineage FROM history.search_audit a JOIN pg_temp.result x ON a.search_event_id = (x.r).search_event_id),
          2000, 'the lineage count covers the newest max_candidates matches inside the windows');
SELECT is((SELECT a.candidates_capped FROM history.search_audit a JOIN pg_temp.result x ON a.search_event_id = (x.r).search_event_id),
          true, 'the audit says a cap was reached (the counts do not cover every match)');

-- The same at a small cap, where the run has also loaded the newest eligible
-- match: the context is skipped before the cap too.
UPDATE history.search_settings SET max_candidates = 3, max_counted_candidates = 3;
CREATE TEMP TABLE small ON COMMIT DROP AS
SELECT history._search_history(history.begin_run('ce-bot', 'ce-g', 'ce-ann', 'ce-cur', ARRAY['ce-ok-2']), 'apricot') AS r;
SELECT is((SELECT coalesce(array_agg(h.message_id), '{}') FROM small x, unnest((x.r).hits) h), ARRAY['ce-ok-1'],
          'at cap three, the eligible match older than 2 100 blocked ones and a loaded one is still found');
UPDATE history.search_settings SET max_candidates = 2000, max_counted_candidates = 500;

-- Each strategy of _newest_matches skips blocked and in-context rows before
-- counting: asked for two, it returns the two eligible matches.
CREATE TEMP TABLE keys ON COMMIT DROP AS
SELECT (SELECT account_key FROM history.accounts WHERE account_id = 'ce-bot') AS bot,
       (SELECT account_key FROM history.accounts WHERE account_id = 'ce-ann') AS ann,
       (SELECT conversation_key FROM history.conversations WHERE conversation_id = 'ce-g') AS g,
       (SELECT message_key FROM history.messages WHERE message_id = 'ce-cur') AS cur;
CREATE TEMP TABLE windows ON COMMIT DROP AS
SELECT coalesce(array_agg(w.conversation_key), '{}') AS convs, coalesce(array_agg(w.visible), '{}') AS visible
  FROM keys k, history._audience_windows(1, ARRAY[k.ann], NULL) w;
CREATE FUNCTION pg_temp.newest(p_strategy text, p_exclude bigint[] DEFAULT '{}', p_count integer DEFAULT 2)
RETURNS text[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(n.message_id ORDER BY n.sent_at DESC, n.message_id DESC), '{}')
      FROM keys k, windows w,
           history._newest_matches(1, to_tsquery('simple', 'apricot'), k.bot, ARRAY[k.g],
                                   p_windows => NULL, p_member_windows => true, p_authors => NULL,
                                   p_after => NULL, p_before => NULL, p_count => p_count, p_strategy => p_strategy,
                                   p_audience => ARRAY[k.ann], p_audience_conversations => w.convs,
                                   p_audience_windows => w.visible, p_exclude => p_exclude) n $$;

SELECT is(pg_temp.newest(s), ARRAY['ce-ok-2', 'ce-ok-1'], format('strategy %s skips blocked rows before the count', s))
  FROM unnest(ARRAY['text', 'walk', 'slice', 'slice:weeks', 'probe']) s;
SELECT is(pg_temp.newest(s, ARRAY[(SELECT message_key FROM history.messages WHERE message_id = 'ce-ok-2')], 1),
          ARRAY['ce-ok-1'], format('strategy %s skips excluded (in-context) rows before the count', s))
  FROM unnest(ARRAY['text', 'walk', 'slice', 'probe']) s;
SELECT is(pg_temp.newest(NULL), ARRAY['ce-ok-2', 'ce-ok-1'], 'the chosen strategy skips blocked rows before the count');

SELECT * FROM finish();
ROLLBACK;
