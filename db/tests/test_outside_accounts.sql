-- An account outside the run (not the agent, the requester or an account
-- linked to it, nor a member of the audience) never changes a search's hits,
-- scores or reasons: not by its display name, not by what it writes in a
-- conversation the run may not see, whatever that conversation's language.
-- Each case repeats the same search in a new run after the stranger acted.
BEGIN;
SELECT plan(5);

SELECT history.upsert_account(a, k) FROM (VALUES ('oa-bot', 'agent'), ('oa-alice', 'person'), ('oa-bob', 'person'),
        ('oa-zed', 'person'), ('oa-yan', 'person')) v(a, k);
SELECT history.upsert_conversation('oa-ch', 'channel');
SELECT history.add_member('oa-ch', a, '2026-01-01 00:00+00') FROM unnest(ARRAY['oa-bot', 'oa-alice', 'oa-bob', 'oa-zed']) a;
SELECT history.post_message(m, 'oa-ch', a, b, s::timestamptz) FROM (VALUES
        ('oa-1', 'oa-alice', 'die hard is the film with the tower', '2026-03-01 10:01+00'),
        ('oa-2', 'oa-bob', 'the tower film again, die hard', '2026-03-01 10:02+00'),
        ('oa-3', 'oa-zed', 'tower tickets for the film', '2026-03-01 10:03+00'),
        ('oa-now', 'oa-alice', 'which film?', '2026-03-01 10:10+00')) v(m, a, b, s);

CREATE TEMP TABLE oa (name text PRIMARY KEY, result history.search_result) ON COMMIT DROP;
-- (returns '' rather than void: pytest-pgtap reads every row of the file's output as text)
CREATE FUNCTION pg_temp.search(p_name text) RETURNS text LANGUAGE sql AS $$
    INSERT INTO oa VALUES (p_name, history._search_history(
        history.begin_run('oa-bot', 'oa-ch', 'oa-alice', 'oa-now', '{}', ARRAY['oa-alice', 'oa-bob']), 'die hard tower film'));
    SELECT ''::text $$;
CREATE FUNCTION pg_temp.scores(p_name text) RETURNS jsonb LANGUAGE sql AS $$
    SELECT jsonb_agg(jsonb_build_object('id', h.message_id, 'score', h.score, 'reasons', h.reasons) ORDER BY h.message_id)
      FROM oa, unnest((oa.result).hits) h WHERE oa.name = p_name $$;

SELECT pg_temp.search('before');
SELECT is(jsonb_array_length(pg_temp.scores('before')), 3, 'control: three hits');

-- A stranger named like the query's words (oa-zed wrote oa-3; oa-yan is in no conversation).
SELECT history.upsert_account('oa-zed', 'person', 'Tower');
SELECT history.upsert_account('oa-yan', 'person', 'Film Hard');
SELECT pg_temp.search('named');
SELECT is(pg_temp.scores('named'), pg_temp.scores('before'), 'display names of accounts outside the run change no score');

-- A stranger's conversation in English, which the run may not see.
SELECT history.upsert_conversation('oa-priv', 'group');
SELECT history.add_member('oa-priv', 'oa-yan', '2026-01-01 00:00+00');
SELECT history.post_message('oa-p1', 'oa-priv', 'oa-yan', 'die hard tower film film film', '2026-03-01 10:04+00');
SELECT pg_temp.search('private');
SELECT is(pg_temp.scores('private'), pg_temp.scores('before'),
          'a stranger''s messages in a conversation the run may not see change no score');

-- A stranger's conversation in German, which the run may not see.
SELECT history.upsert_conversation('oa-de', 'group', NULL, 'german');
SELECT history.add_member('oa-de', 'oa-yan', '2026-01-01 00:00+00');
SELECT history.post_message('oa-d1', 'oa-de', 'oa-yan', 'die Filme sind gut', '2026-03-01 10:05+00');
SELECT pg_temp.search('german');
SELECT is(pg_temp.scores('german'), pg_temp.scores('before'),
          'a stranger''s conversation in another language changes no score or reason');
SELECT is((SELECT array_agg(h.message_id ORDER BY h.message_id) FROM oa, unnest((oa.result).hits) h WHERE oa.name = 'german'),
          ARRAY['oa-1', 'oa-2', 'oa-3'], 'nor the hits');

SELECT * FROM finish();
ROLLBACK;
