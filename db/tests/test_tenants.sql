-- Tenants: ids are unique within a tenant, every function naming ids takes
-- p_tenant (the default tenant when omitted), naming another tenant's id is
-- HS003, and a run of one tenant never sees, ranks with, counts or delivers
-- into another's data (docs/tenants.md).
BEGIN;
SELECT plan(48);

-- Tenant 'default': a team of three, a few messages about a lighthouse.
DO $world$
BEGIN
    PERFORM history.upsert_account('bot', 'agent', 'Assistant');
    PERFORM history.upsert_account('ann', 'person', 'Ann');
    PERFORM history.upsert_account('ben', 'person', 'Ben');
    PERFORM history.upsert_conversation('team', 'group', 'Team');
    PERFORM history.add_member('team', 'bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('team', 'ann', '2026-01-01 00:00+00');
    PERFORM history.add_member('team', 'ben', '2026-01-01 00:00+00');
    PERFORM history.post_message('m1', 'team', 'ann', 'the lighthouse budget is approved', '2026-01-02 10:00+00');
    PERFORM history.post_message('m2', 'team', 'ben', 'lighthouse paint should be blue', '2026-01-03 10:00+00');
    PERFORM history.post_message('m3', 'team', 'ann', 'thanks for the budget numbers', '2026-01-04 10:00+00');
    PERFORM history.post_message('a-only', 'team', 'ben', 'only the default tenant has this', '2026-01-05 10:00+00');
    PERFORM history.post_message('cur', 'team', 'ann', 'what about the lighthouse?', '2026-06-01 10:00+00');
END
$world$;

CREATE TEMP TABLE searches (label text PRIMARY KEY, r history.search_result) ON COMMIT DROP;
CREATE FUNCTION pg_temp.search_default(p_label text, p_query text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pg_temp.searches
    VALUES (p_label, history._search_history(history.begin_run('bot', 'team', 'ann', 'cur'), p_query, 'anyone', NULL, NULL, 20));
END
$$;
-- What the searcher is told of each hit, best first, and what the audit counted.
CREATE FUNCTION pg_temp.told(p_label text) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(format('%s|%s|%s|%s|%s|%s|%s|%s', h.message_id, h.conversation_id, h.speaker_id, h.body, h.score,
                             h.reasons, h.before, h.after), E'\n' ORDER BY o)
      FROM pg_temp.searches s, unnest((s.r).hits) WITH ORDINALITY h(message_id, conversation_id, sent_at, speaker_id,
                                                                    speaker_role, body, score, reasons, before, after,
                                                                    body_truncated, o)
     WHERE s.label = p_label $$;
CREATE FUNCTION pg_temp.audited(p_label text) RETURNS text LANGUAGE sql AS $$
    SELECT format('%s %s %s %s %s %s %s %s %s', e.hit_message_ids, e.hit_rankings, e.excluded_speaker, e.excluded_time,
                  e.excluded_perspective, e.excluded_audience, e.excluded_lineage, e.excluded_alive, e.excluded_in_context)
      FROM pg_temp.searches s JOIN history.conversation_search_events e ON e.search_event_id = (s.r).search_event_id
     WHERE s.label = p_label $$;
CREATE FUNCTION pg_temp.languages(p_label text) RETURNS text[] LANGUAGE sql AS $$
    SELECT v.languages::text[] FROM pg_temp.searches s JOIN history.search_reveals v ON v.search_event_id = (s.r).search_event_id
     WHERE s.label = p_label $$;

SELECT pg_temp.search_default('before', 'lighthouse budget Ann');
SELECT pg_temp.search_default('before-de', 'Leuchtturm');
SELECT isnt(pg_temp.told('before'), NULL, 'the default tenant''s search finds its own messages');

-- Tenant 'acme', created by its first upsert: the same ids, other words, more
-- of the searched terms, a German conversation, an extra member.
SELECT is((SELECT count(*)::int FROM history.tenants WHERE tenant_id = 'acme'), 0, 'no tenant acme yet');
DO $world$
BEGIN
    PERFORM history.upsert_account('bot', 'agent', 'Acme bot', 'acme');
    PERFORM history.upsert_account('ann', 'person', 'Budget Lighthouse', 'acme');
    PERFORM history.upsert_account('ben', 'person', 'Ben', 'acme');
    PERFORM history.upsert_account('zed', 'person', 'Zed', 'acme');
    PERFORM history.upsert_conversation('team', 'group', 'Acme team', NULL, 'acme');
    PERFORM history.upsert_conversation('haus', 'group', 'Haus', 'german', 'acme');
    PERFORM history.add_member('team', 'bot', '2025-12-01 00:00+00', 'acme');
    PERFORM history.add_member('team', 'ann', '2025-12-01 00:00+00', 'acme');
    PERFORM history.add_member('team', 'ben', '2025-12-01 00:00+00', 'acme');
    PERFORM history.add_member('team', 'zed', '2025-12-01 00:00+00', 'acme');
    PERFORM history.add_member('haus', 'bot', '2025-12-01 00:00+00', 'acme');
    PERFORM history.add_member('haus', 'ann', '2025-12-01 00:00+00', 'acme');
    PERFORM history.post_message('m1', 'team', 'ann', 'acme secret: lighthouse lighthouse budget budget', '2026-01-02 10:00+00',
                                 '{}', 'acme');
    PERFORM history.post_message('m2', 'team', 'zed', 'acme lighthouse plans for ann', '2026-01-02 11:00+00', '{}', 'acme');
    FOR i IN 1..30 LOOP
        PERFORM history.post_message('m-many-' || i, 'team', 'ben', 'lighthouse ' || i, '2026-01-10 10:00+00'::timestamptz
                                     + i * interval '1 minute', '{}', 'acme');
    END LOOP;
    PERFORM history.post_message('m-de', 'haus', 'ann', 'Der Leuchtturm braucht ein neues Budget', '2026-01-03 10:00+00',
                                 '{}', 'acme');
    PERFORM history.post_message('b-only', 'team', 'ann', 'only acme has this', '2026-01-05 10:00+00', '{m1}', 'acme');
    PERFORM history.post_message('cur', 'team', 'ann', 'lighthouse?', '2026-06-01 10:00+00', '{}', 'acme');
    PERFORM history.link_identity('p-acme', 'ann', 'ben', '2026-01-01 00:00+00', 'acme');
END
$world$;
SELECT is((SELECT count(*)::int FROM history.tenants WHERE tenant_id = 'acme'), 1, 'the first upsert naming acme created it');

-- ------------------------------------------------------------------ ids within a tenant
SELECT is((SELECT array_agg(t.tenant_id ORDER BY t.tenant_id) FROM history.accounts a JOIN history.tenants t USING (tenant_key)
            WHERE a.account_id = 'ann'), ARRAY['acme', 'default'], 'account ann exists once in each tenant');
SELECT is((SELECT e.body FROM history.messages m JOIN history.message_events e ON e.event_key = m.current_event_key
            WHERE m.message_id = 'm1' AND m.tenant_key = 1), 'the lighthouse budget is approved',
          'message m1 of the default tenant keeps its text beside acme''s m1');
SELECT is((SELECT count(*)::int FROM history.messages m JOIN history.message_lineage l USING (message_key, tenant_key)
            JOIN history.messages s ON s.message_key = l.ancestor_key
            WHERE m.message_id = 'b-only' AND s.tenant_key = m.tenant_key AND s.message_id = 'm1'), 1,
          'a source id names the message of the poster''s tenant');
SELECT lives_ok($$SELECT history.post_message('m1', 'team', 'ann', 'the lighthouse budget is approved', '2026-01-02 10:00+00')$$,
                'an identical re-post in the default tenant is idempotent, whatever acme''s m1 says');
SELECT throws_ok($$SELECT history.post_message('m1', 'team', 'ann', 'the lighthouse budget is approved', '2026-01-02 10:00+00',
                                               '{}', 'acme')$$, 'HS004', NULL,
                 'the same re-post in acme conflicts with acme''s own m1');
SELECT lives_ok($$SELECT history.edit_message('m2', 'acme plans, edited', '2026-01-02 12:00+00', 'acme')$$,
                'edit_message with p_tenant edits that tenant''s message');
SELECT is((SELECT array_agg(e.body ORDER BY m.tenant_key) FROM history.messages m
             JOIN history.message_events e ON e.event_key = m.current_event_key WHERE m.message_id = 'm2'),
          ARRAY['lighthouse paint should be blue', 'acme plans, edited'], 'and leaves the default tenant''s m2 as it was');

-- ------------------------------------------------------------------ naming another tenant's id
SELECT throws_ok($$SELECT history.add_member('haus', 'ann', '2026-01-01')$$, 'HS003', 'unknown conversation ''haus''',
                 'a conversation of acme is unknown to the default tenant');
SELECT throws_ok($$SELECT history.add_member('team', 'zed', '2026-01-01')$$, 'HS003', 'unknown account ''zed''',
                 'an account of acme is unknown to the default tenant');
SELECT throws_ok($$SELECT history.post_message('x1', 'team', 'zed', 'hi', '2026-01-01')$$, 'HS003', NULL,
                 'post_message: an author of acme is unknown to the default tenant');
SELECT throws_ok($$SELECT history.post_message('x1', 'team', 'ann', 'hi', '2026-01-01', '{b-only}')$$, 'HS003',
                 'unknown message ''b-only''', 'post_message: a source of acme is unknown to the default tenant');
SELECT throws_ok($$SELECT history.post_message('x1', 'team', 'ann', 'hi', '2026-01-01', '{a-only}', 'acme')$$, 'HS003',
                 'unknown message ''a-only''', 'and a source of the default tenant is unknown to acme');
SELECT throws_ok($$SELECT history.edit_message('b-only', 'x', '2026-07-01')$$, 'HS003', NULL,
                 'edit_message: a message of acme is unknown to the default tenant');
SELECT throws_ok($$SELECT history.delete_message('a-only', '2026-07-01', 'acme')$$, 'HS003', NULL,
                 'delete_message: a message of the default tenant is unknown to acme');
SELECT throws_ok($$SELECT history.remove_member('haus', 'ann', '2026-07-01')$$, 'HS003', NULL,
                 'remove_member: a conversation of acme is unknown to the default tenant');
SELECT throws_ok($$SELECT history.link_identity('p-x', 'ann', 'zed', '2026-01-01')$$, 'HS003', 'unknown account ''zed''',
                 'link_identity: a proof never joins accounts of two tenants');
SELECT throws_ok($$SELECT history.revoke_proof('p-acme', '2026-07-01')$$, 'HS003', 'unknown proof ''p-acme''',
                 'revoke_proof: a proof of acme is unknown to the default tenant');
SELECT throws_ok($$SELECT history.erase_account('zed', '2026-07-01')$$, 'HS003', NULL,
                 'erase_account: an account of acme is unknown to the default tenant');
SELECT throws_ok($$SELECT history.begin_run('bot', 'team', 'ann', 'cur', '{b-only}')$$, 'HS003', NULL,
                 'begin_run: a loaded message of acme is unknown to the default tenant');
SELECT throws_ok($$SELECT history.begin_run('bot', 'team', 'ann', 'cur', '{}', '{zed}')$$, 'HS003', NULL,
                 'begin_run: an audience account of acme is unknown to the default tenant');
SELECT throws_ok($$SELECT history.begin_run('bot', 'haus', 'ann', 'cur')$$, 'HS003', NULL,
                 'begin_run: a destination of acme is unknown to the default tenant');

-- ------------------------------------------------------------------ tenant ids
SELECT throws_ok($$SELECT history.add_member('team', 'ann', '2026-01-01', 'nowhere')$$, 'HS003', 'unknown tenant ''nowhere''',
                 'a tenant no upsert created is HS003 everywhere else');
SELECT throws_ok($$SELECT history.begin_run('bot', 'team', 'ann', 'cur', '{}', NULL, 'nowhere')$$, 'HS003',
                 'unknown tenant ''nowhere''', 'begin_run in an unknown tenant is HS003');
SELECT throws_ok($$SELECT history.upsert_account('q', 'person', NULL, 'has space')$$, 'HS001',
                 'p_tenant must be a tenant id, got ''has space''', 'a malformed tenant id is HS001, naming it');
SELECT throws_ok($$SELECT history.upsert_conversation('q', 'group', NULL, NULL, NULL)$$, 'HS001',
                 'p_tenant must be a tenant id, got NULL', 'a null tenant id is HS001');
SELECT throws_ok($$SELECT history.delete_message('m1', '2026-07-01', '')$$, 'HS001', 'p_tenant must be a tenant id, got ''''',
                 'a malformed tenant id is HS001 for the other functions too');
SELECT throws_ok($$SELECT history.upsert_account('q', 'robot', NULL, 'fresh')$$, 'HS001', NULL,
                 'an upsert refused for bad input ...');
SELECT is((SELECT count(*)::int FROM history.tenants WHERE tenant_id IN ('nowhere', 'has space', 'fresh')), 0,
          '... and the calls naming an unknown tenant created none');

-- ------------------------------------------------------------------ nothing crosses: search
SELECT pg_temp.search_default('after', 'lighthouse budget Ann');
SELECT pg_temp.search_default('after-de', 'Leuchtturm');
SELECT is(pg_temp.told('after'), pg_temp.told('before'),
          'acme''s messages change nothing the default tenant''s search returns: hits, bodies, scores, reasons, neighbours');
SELECT is(pg_temp.audited('after'), pg_temp.audited('before'),
          'nor what its audit counts (rankings, exclusions)');
SELECT ok(NOT EXISTS (SELECT FROM pg_temp.searches s, unnest((s.r).hits) h
                       WHERE s.label IN ('after', 'after-de') AND (h.body LIKE '%acme%' OR h.body LIKE '%Leuchtturm%')),
          'no hit of the default tenant''s search is an acme message');
SELECT is(pg_temp.told('after-de'), NULL, 'a word only acme''s German conversation holds finds nothing');
SELECT is(pg_temp.languages('after'), pg_temp.languages('before'),
          'the query languages of a default-tenant run ignore acme''s German conversation');
SELECT is((SELECT array_agg(DISTINCT l ORDER BY l) FROM history.accounts a, unnest(a.name_languages) l WHERE a.tenant_key = 1),
          ARRAY['english'], 'the default tenant''s name terms are analysed in its own languages only');
SELECT ok((SELECT bool_and('german' = ANY (a.name_languages)) FROM history.accounts a
            JOIN history.tenants t USING (tenant_key) WHERE t.tenant_id = 'acme'),
          'acme''s are analysed in German too');
SELECT is(((SELECT h FROM pg_temp.searches s, unnest((s.r).hits) h WHERE s.label = 'after' AND h.message_id = 'm1')).reasons
            ->> 'participation',
          ((SELECT h FROM pg_temp.searches s, unnest((s.r).hits) h WHERE s.label = 'before' AND h.message_id = 'm1')).reasons
            ->> 'participation',
          'participation counts the default tenant''s authors only');

-- ------------------------------------------------------------------ nothing crosses: runs and delivery
CREATE TEMP TABLE runs (label text PRIMARY KEY, run uuid) ON COMMIT DROP;
INSERT INTO runs VALUES ('default', history.begin_run('bot', 'team', 'ann', 'cur')),
                        ('acme', history.begin_run('bot', 'team', 'ann', 'cur', '{}', NULL, 'acme'));
SELECT is((SELECT array_agg(DISTINCT a.tenant_key) FROM history.runs r, unnest(r.audience_keys) k
             JOIN history.accounts a ON a.account_key = k WHERE r.run_token = (SELECT run FROM runs WHERE label = 'default')),
          ARRAY[1], 'the default audience of a default-tenant run is of its tenant ...');
SELECT is((SELECT cardinality(r.audience_keys) FROM history.runs r WHERE r.run_token = (SELECT run FROM runs WHERE label = 'default')),
          2, '... ann and ben, never acme''s zed of a conversation with the same id');
SELECT is((SELECT cardinality(r.audience_keys) FROM history.runs r JOIN history.tenants t USING (tenant_key)
            WHERE t.tenant_id = 'acme' AND r.run_token = (SELECT run FROM runs WHERE label = 'acme')),
          3, 'an acme run carries its tenant and acme''s audience (ann, ben, zed)');
SELECT is_empty($$SELECT * FROM history.check_delivery((SELECT run FROM runs WHERE label = 'default'))$$,
                'check_delivery of a default-tenant run sees nothing of acme');
SELECT lives_ok($$SELECT history.record_reply((SELECT run FROM runs WHERE label = 'acme'), 'reply', 'noted', '2026-06-01 11:00+00')$$,
                'record_reply of an acme run ...');
SELECT is((SELECT array_agg(t.tenant_id) FROM history.messages m JOIN history.tenants t USING (tenant_key) WHERE m.message_id = 'reply'),
          ARRAY['acme'], '... posts into acme''s conversation, not the default tenant''s of the same id');
SELECT is((SELECT array_agg(DISTINCT tenant_key) FROM history.run_trace WHERE run_key =
             (SELECT run_key FROM history.runs WHERE run_token = (SELECT run FROM runs WHERE label = 'acme'))),
          (SELECT array_agg(tenant_key) FROM history.tenants WHERE tenant_id = 'acme'), 'and its trace is acme''s');

-- ------------------------------------------------------------------ erasure stays in its tenant
SELECT is(history.erase_account('ann', '2026-07-01', 'acme'), 4, 'erasing acme''s ann erases her acme messages ...');
SELECT is((SELECT count(*)::int FROM history.messages m JOIN history.message_events e ON e.event_key = m.current_event_key
            JOIN history.accounts a ON a.account_key = m.author_key
            WHERE a.account_id = 'ann' AND a.tenant_key = 1 AND e.body IS NOT NULL), 3,
          '... and none of the default tenant''s ann');

SELECT * FROM finish();
ROLLBACK;
