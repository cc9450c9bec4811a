-- Who may see what (SPEC §2, §3 speaker/time): every rule of eligibility,
-- for hits and for neighbours, asserted through history.search_history.
BEGIN;
SELECT plan(65);

-- ------------------------------------------------------------------ the world
-- bot: the agent. alice: the usual requester; alice2 is her other account
-- (linked by proof el-p1, verified after alice2 wrote). bob, carol, dave: people.
--
--   el-chan   channel  alice, bob, dave since 01-01; bot 02-01..04-01 and again from 05-01
--   el-grp    group    bot, alice since 01-01; carol since 03-01
--   el-grp2   group    bot, alice2
--   el-dm-a   direct   bot, alice
--   el-dm-a2  direct   bot, alice2
--   el-dm-d   direct   bot, dave
--   el-dm-bc  direct   bob, carol (the agent is not in it)
--   el-solo   channel  bot alone
--   el-nb     channel  bot, alice, bob  (neighbours: deleted, lineage, context)
--   el-nbp    channel  alice, bob; bot 10:00..10:10 and from 10:20; carol 10:06..10:22 (neighbours: perspective, audience)
DO $world$
DECLARE
    a text;
BEGIN
    FOREACH a IN ARRAY ARRAY['el-alice', 'el-alice2', 'el-bob', 'el-carol', 'el-dave'] LOOP
        PERFORM history.upsert_account(a, 'person');
    END LOOP;
    PERFORM history.upsert_account('el-bot', 'agent');

    PERFORM history.upsert_conversation('el-chan', 'channel');
    PERFORM history.upsert_conversation('el-grp', 'group');
    PERFORM history.upsert_conversation('el-grp2', 'group');
    PERFORM history.upsert_conversation('el-dm-a', 'direct');
    PERFORM history.upsert_conversation('el-dm-a2', 'direct');
    PERFORM history.upsert_conversation('el-dm-d', 'direct');
    PERFORM history.upsert_conversation('el-dm-bc', 'direct');
    PERFORM history.upsert_conversation('el-solo', 'channel');
    PERFORM history.upsert_conversation('el-nb', 'channel');
    PERFORM history.upsert_conversation('el-nbp', 'channel');

    PERFORM history.add_member('el-chan', 'el-alice', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-chan', 'el-bob', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-chan', 'el-dave', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-chan', 'el-bot', '2026-02-01 00:00+00');
    PERFORM history.remove_member('el-chan', 'el-bot', '2026-04-01 00:00+00');
    PERFORM history.add_member('el-chan', 'el-bot', '2026-05-01 00:00+00');

    PERFORM history.add_member('el-grp', 'el-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-grp', 'el-alice', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-grp', 'el-carol', '2026-03-01 00:00+00');
    PERFORM history.add_member('el-grp2', 'el-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-grp2', 'el-alice2', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-dm-a', 'el-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-dm-a', 'el-alice', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-dm-a2', 'el-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-dm-a2', 'el-alice2', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-dm-d', 'el-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-dm-d', 'el-dave', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-dm-bc', 'el-bob', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-dm-bc', 'el-carol', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-solo', 'el-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-nb', 'el-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-nb', 'el-alice', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-nb', 'el-bob', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-nbp', 'el-alice', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-nbp', 'el-bob', '2026-01-01 00:00+00');
    PERFORM history.add_member('el-nbp', 'el-bot', '2026-06-01 10:00+00');
    PERFORM history.remove_member('el-nbp', 'el-bot', '2026-06-01 10:10+00');
    PERFORM history.add_member('el-nbp', 'el-bot', '2026-06-01 10:20+00');
    PERFORM history.add_member('el-nbp', 'el-carol', '2026-06-01 10:06+00');
    PERFORM history.remove_member('el-nbp', 'el-carol', '2026-06-01 10:22+00');

    -- The word "zebra" is the probe of every eligibility rule.
    PERFORM history.post_message('c_before', 'el-chan', 'el-bob', 'zebra before the agent joined', '2026-01-15 12:00+00');
    PERFORM history.post_message('c_in1', 'el-chan', 'el-bob', 'zebra visible one', '2026-02-10 00:00+00');
    PERFORM history.post_message('c_gap', 'el-chan', 'el-bob', 'zebra while the agent was away', '2026-04-15 12:00+00');
    PERFORM history.post_message('c_in2', 'el-chan', 'el-alice', 'zebra visible two', '2026-05-10 00:00+00');
    PERFORM history.post_message('c_you', 'el-chan', 'el-bot', 'zebra from the agent', '2026-05-12 12:00+00');
    PERFORM history.post_message('d1', 'el-dm-d', 'el-dave', 'secret zebra plan', '2026-03-01 12:00+00');
    PERFORM history.post_message('l1', 'el-chan', 'el-bot', 'zebra derived once', '2026-05-15 12:00+00', ARRAY['d1']);
    PERFORM history.post_message('l2', 'el-chan', 'el-bot', 'zebra derived twice', '2026-05-16 12:00+00', ARRAY['l1']);
    PERFORM history.post_message('c_del', 'el-chan', 'el-bob', 'zebra deleted later', '2026-05-17 12:00+00');
    PERFORM history.delete_message('c_del', '2026-05-18 12:00+00');
    PERFORM history.post_message('load_chan', 'el-chan', 'el-bob', 'loaded zebra', '2026-06-25 12:00+00');
    PERFORM history.post_message('cur_chan', 'el-chan', 'el-alice', 'current question zebra', '2026-06-26 12:00+00');
    PERFORM history.post_message('g_early', 'el-grp', 'el-alice', 'zebra group early', '2026-02-15 12:00+00');
    PERFORM history.post_message('g_late', 'el-grp', 'el-alice', 'zebra group late', '2026-03-10 12:00+00');
    PERFORM history.post_message('g2', 'el-grp2', 'el-alice2', 'zebra second group', '2026-02-01 00:00+00');
    PERFORM history.post_message('dba1', 'el-dm-a', 'el-alice', 'zebra direct alice', '2026-02-01 00:00+00');
    PERFORM history.post_message('cur_dm', 'el-dm-a', 'el-alice', 'question', '2026-06-27 12:00+00');
    PERFORM history.post_message('dba2', 'el-dm-a2', 'el-alice2', 'zebra direct alice2', '2026-02-02 12:00+00');
    PERFORM history.post_message('dbc', 'el-dm-bc', 'el-bob', 'zebra bob carol', '2026-02-01 12:00+00');
    PERFORM history.post_message('cur_solo', 'el-solo', 'el-bot', 'note', '2026-06-01 12:00+00');

    -- Neighbours around "needle" (nb5): deleted nb3 and nb7, nb4 drawn from the private d1.
    PERFORM history.post_message('nb1', 'el-nb', 'el-alice', 'first filler', '2026-06-01 10:01+00');
    PERFORM history.post_message('nb2', 'el-nb', 'el-bob', 'second filler', '2026-06-01 10:02+00');
    PERFORM history.post_message('nb3', 'el-nb', 'el-bob', 'third filler', '2026-06-01 10:03+00');
    PERFORM history.post_message('nb4', 'el-nb', 'el-bot', 'fourth filler', '2026-06-01 10:04+00', ARRAY['d1']);
    PERFORM history.post_message('nb5', 'el-nb', 'el-bot', 'needle', '2026-06-01 10:05+00');
    PERFORM history.post_message('nb6', 'el-nb', 'el-alice', 'sixth filler', '2026-06-01 10:06+00');
    PERFORM history.post_message('nb7', 'el-nb', 'el-bob', 'seventh filler', '2026-06-01 10:07+00');
    PERFORM history.post_message('nb8', 'el-nb', 'el-alice', 'eighth filler', '2026-06-01 10:08+00');
    PERFORM history.post_message('nb9', 'el-nb', 'el-bob', 'ninth filler', '2026-06-01 10:09+00');
    PERFORM history.post_message('cur_nb', 'el-nb', 'el-alice', 'question', '2026-06-02 10:00+00');
    PERFORM history.delete_message('nb3', '2026-06-01 11:00+00');
    PERFORM history.delete_message('nb7', '2026-06-01 11:00+00');

    -- Neighbours around "pin" (p2): p0 before the agent joined, p4 while it was away, p1 before carol joined.
    PERFORM history.post_message('p0', 'el-nbp', 'el-bob', 'filler zero', '2026-06-01 09:00+00');
    PERFORM history.post_message('p1', 'el-nbp', 'el-bob', 'filler one', '2026-06-01 10:05+00');
    PERFORM history.post_message('p2', 'el-nbp', 'el-alice', 'pin', '2026-06-01 10:07+00');
    PERFORM history.post_message('p3', 'el-nbp', 'el-bob', 'filler three', '2026-06-01 10:09+00');
    PERFORM history.post_message('p4', 'el-nbp', 'el-bob', 'filler four', '2026-06-01 10:15+00');
    PERFORM history.post_message('p5', 'el-nbp', 'el-bob', 'filler five', '2026-06-01 10:25+00');
    PERFORM history.post_message('p6', 'el-nbp', 'el-bob', 'filler six', '2026-06-01 10:30+00');
    PERFORM history.post_message('cur_nbp', 'el-nbp', 'el-alice', 'question', '2026-06-02 10:00+00');

    PERFORM history.link_identity('el-p1', 'el-alice', 'el-alice2', '2026-06-20 00:00+00');
END
$world$;

-- ------------------------------------------------------------------ runs and helpers
CREATE TEMP TABLE runs (name text PRIMARY KEY, token uuid NOT NULL) ON COMMIT DROP;
INSERT INTO runs VALUES
    -- default audience of el-chan: alice, bob, dave
    ('chan',    history.begin_run('el-bot', 'el-chan', 'el-alice', 'cur_chan', ARRAY['load_chan'])),
    ('chan_alice', history.begin_run('el-bot', 'el-chan', 'el-alice', 'cur_chan', '{}', ARRAY['el-alice'])),
    ('chan_empty', history.begin_run('el-bot', 'el-chan', 'el-alice', 'cur_chan', '{}', '{}'::text[])),
    ('chan_dave', history.begin_run('el-bot', 'el-chan', 'el-dave', 'cur_chan', '{}', ARRAY['el-dave'])),
    ('chan_alice2', history.begin_run('el-bot', 'el-chan', 'el-alice', 'cur_chan', '{}', ARRAY['el-alice2'])),
    -- default audience of el-grp: alice, carol
    ('grp',     history.begin_run('el-bot', 'el-grp', 'el-alice', 'cur_dm')),
    -- default audience of el-dm-a: alice
    ('dm',      history.begin_run('el-bot', 'el-dm-a', 'el-alice', 'cur_dm')),
    -- default audience of el-solo: nobody
    ('solo',    history.begin_run('el-bot', 'el-solo', 'el-alice', 'cur_solo')),
    ('nb',      history.begin_run('el-bot', 'el-nb', 'el-alice', 'cur_nb')),
    ('nb_loaded', history.begin_run('el-bot', 'el-nb', 'el-alice', 'cur_nb', ARRAY['nb6'])),
    ('nbp',     history.begin_run('el-bot', 'el-nbp', 'el-alice', 'cur_nbp')),
    ('nbp_carol', history.begin_run('el-bot', 'el-nbp', 'el-alice', 'cur_nbp', '{}', ARRAY['el-alice', 'el-carol']));

CREATE TEMP TABLE searches (label text PRIMARY KEY, r history.search_result NOT NULL) ON COMMIT DROP;

-- Sorted (byte order) so expectations can be written as sets.
CREATE FUNCTION pg_temp.srt(p text[]) RETURNS text[] LANGUAGE sql IMMUTABLE AS
$$ SELECT coalesce(array_agg(x ORDER BY x COLLATE "C"), '{}') FROM unnest(p) x $$;

-- Search as run p_run, keep the result under p_label, return the hit ids as a set.
CREATE FUNCTION pg_temp.s(p_label text, p_run text, p_query text, p_speaker text DEFAULT 'anyone',
                          p_after timestamptz DEFAULT NULL, p_before timestamptz DEFAULT NULL)
RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
    v history.search_result;
BEGIN
    v := history._search_history((SELECT token FROM pg_temp.runs WHERE name = p_run), p_query, p_speaker, p_after, p_before, 20);
    INSERT INTO pg_temp.searches VALUES (p_label, v);
    RETURN pg_temp.srt(ARRAY(SELECT h.message_id FROM unnest(v.hits) h));
END
$$;

-- The hit ids of a search already made.
CREATE FUNCTION pg_temp.got(p_label text) RETURNS text[] LANGUAGE sql AS
$$ SELECT pg_temp.srt(ARRAY(SELECT h.message_id FROM pg_temp.searches s, unnest((s.r).hits) h WHERE s.label = p_label)) $$;

CREATE FUNCTION pg_temp.hit(p_label text, p_message text) RETURNS history.search_hit LANGUAGE sql AS
$$ SELECT h FROM pg_temp.searches s, unnest((s.r).hits) h WHERE s.label = p_label AND h.message_id = p_message $$;

CREATE FUNCTION pg_temp.ids(p jsonb) RETURNS text[] LANGUAGE sql IMMUTABLE AS
$$ SELECT coalesce(array_agg(x->>'message_id' ORDER BY o), '{}') FROM jsonb_array_elements(p) WITH ORDINALITY e(x, o) $$;

-- The excluded_* counts of a search's audit row: speaker, time, perspective, audience, lineage, in_context, budget.
CREATE FUNCTION pg_temp.excluded(p_label text) RETURNS int[] LANGUAGE sql AS
$$ SELECT ARRAY[e.excluded_speaker, e.excluded_time, e.excluded_perspective, e.excluded_audience,
                e.excluded_lineage, e.excluded_in_context, e.excluded_budget]
     FROM history.conversation_search_events e
    WHERE e.search_event_id = (SELECT (s.r).search_event_id FROM pg_temp.searches s WHERE s.label = p_label) $$;

-- ------------------------------------------------------------------ perspective, audience, lineage, alive, context
SELECT is(pg_temp.s('chan', 'chan', 'zebra'), pg_temp.srt(ARRAY['c_in1', 'c_in2', 'c_you']),
          'default audience of a channel (alice, bob, dave): only what all of them and the agent could read');
SELECT is(pg_temp.s('solo', 'solo', 'zebra'),
          pg_temp.srt(ARRAY['c_in1', 'c_in2', 'c_you', 'l1', 'l2', 'load_chan', 'cur_chan', 'g_early', 'g_late', 'g2', 'dba1', 'dba2', 'd1']),
          'empty default audience (the agent alone): everything the agent observed, alive and not in context');
SELECT is(pg_temp.s('solo_joined', 'solo', 'joined'), '{}'::text[],
          'perspective: a message sent before the agent joined is never returned (even with no audience)');
SELECT is(pg_temp.excluded('solo_joined'), ARRAY[0, 0, 1, 0, 0, 0, 0], 'perspective: ... and it is counted as excluded by perspective');
SELECT is(pg_temp.s('solo_away', 'solo', 'away'), '{}'::text[],
          'perspective: a message sent while the agent had left the conversation is never returned');
SELECT is(pg_temp.excluded('solo_away'), ARRAY[0, 0, 1, 0, 0, 0, 0], 'perspective: ... counted as excluded by perspective');
SELECT is(pg_temp.s('solo_carol', 'solo', 'carol'), '{}'::text[],
          'perspective: a direct conversation the agent is not in is never searched');
SELECT is(pg_temp.s('chan_empty', 'chan_empty', 'zebra'),
          pg_temp.srt(ARRAY['c_in1', 'c_in2', 'c_you', 'l1', 'l2', 'load_chan', 'g_early', 'g_late', 'g2', 'dba1', 'dba2', 'd1']),
          'explicit empty audience: restricted by perspective only (and the run''s current message)');

SELECT is(pg_temp.s('grp', 'grp', 'zebra'), ARRAY['g_late'],
          'audience: a group message carol (default audience member) could not read yet is excluded; the later one is not');
SELECT is(pg_temp.s('chan_alice', 'chan_alice', 'zebra'),
          pg_temp.srt(ARRAY['c_in1', 'c_in2', 'c_you', 'load_chan', 'g_early', 'g_late', 'dba1', 'dba2']),
          'explicit audience {alice} is authoritative: her group and DMs pass although bob and dave are in the destination');
SELECT is(pg_temp.s('chan_alice_early', 'chan_alice', 'early') || pg_temp.s('chan_early', 'chan', 'early'), ARRAY['g_early'],
          'explicit vs default audience of one destination: g_early only with the explicit one');

SELECT is(pg_temp.s('dm', 'dm', 'zebra'),
          pg_temp.srt(ARRAY['c_in1', 'c_in2', 'c_you', 'load_chan', 'cur_chan', 'g_early', 'g_late', 'dba1', 'dba2']),
          'default audience {alice} of her DM: her channel, her group, her DM and the DM of her linked account');
SELECT is(pg_temp.s('dm_alice2', 'dm', 'alice2'), ARRAY['dba2'],
          'direct-conversation link rule: alice is shown the DM held from her linked account alice2');
SELECT ok(NOT 'g2' = ANY (pg_temp.s('dm_second', 'dm', 'second')),
          'linking never widens a group: alice2''s group is not shown to alice');
SELECT is(pg_temp.s('chan_alice2', 'chan_alice2', 'zebra'), pg_temp.srt(ARRAY['g2', 'dba1', 'dba2']),
          'audience {alice2}: her group, her DM, and alice''s DM through the link; never alice''s channel or group');

SELECT is(pg_temp.s('chan_derived', 'chan', 'derived'), '{}'::text[],
          'lineage: l1 (drawn from a private DM) and l2 (drawn from l1) are excluded for an audience that cannot read the DM');
SELECT is(pg_temp.excluded('chan_derived'), ARRAY[0, 0, 0, 0, 2, 0, 0],
          'lineage: both counted as excluded by lineage (l2 transitively: its direct source l1 is readable)');
SELECT is(pg_temp.s('chan_dave', 'chan_dave', 'zebra'), pg_temp.srt(ARRAY['c_in1', 'c_in2', 'c_you', 'l1', 'l2', 'load_chan', 'd1']),
          'lineage: allowed, two levels deep, when the audience (dave) can read the private source');

SELECT is(pg_temp.s('solo_deleted', 'solo', 'deleted later'), '{}'::text[],
          'alive: a deleted message is never returned, even with no audience restriction');
SELECT is(pg_temp.s('chan_ql', 'chan', 'current loaded'), '{}'::text[],
          'not in context: the run''s current and loaded messages are not returned');
SELECT is(pg_temp.excluded('chan_ql'), ARRAY[0, 0, 0, 0, 0, 2, 0], 'not in context: both counted as in_context');
SELECT is(pg_temp.s('solo_ql', 'solo', 'current loaded'), pg_temp.srt(ARRAY['cur_chan', 'load_chan']),
          'not in context is per run: another run finds those messages');

-- ------------------------------------------------------------------ audit exclusion counts
SELECT is(pg_temp.excluded('chan'), ARRAY[0, 0, 2, 6, 2, 2, 0],
          'audit: excluded perspective 2 (before join, away), audience 6, lineage 2 (l1, l2), in_context 2 (current, loaded)');
SELECT is(pg_temp.s('chan_time', 'chan', 'zebra', 'anyone', '2026-02-01 00:00+00', '2026-06-01 00:00+00'),
          pg_temp.srt(ARRAY['c_in1', 'c_in2', 'c_you']), 'time window search: same hits');
SELECT is(pg_temp.excluded('chan_time'), ARRAY[0, 3, 1, 6, 2, 0, 0],
          'audit: time counted before the other rules (c_before, current, loaded), then perspective 1, audience 6, lineage 2');
SELECT is(pg_temp.s('chan_you', 'chan', 'zebra', 'you'), ARRAY['c_you'], 'speaker you in the channel run: the agent''s eligible message');
SELECT is(pg_temp.excluded('chan_you'), ARRAY[12, 0, 0, 0, 2, 0, 0],
          'audit: speaker counted first (12 matches by others), then lineage 2 (the agent''s derived messages)');
SELECT is(pg_temp.excluded('grp'), ARRAY[0, 0, 2, 12, 0, 0, 0],
          'audit of the group run: perspective 2, audience 12 (carol could read only g_late)');

-- ------------------------------------------------------------------ speaker filter and roles
SELECT is(pg_temp.s('dm_req', 'dm', 'zebra', 'requester'), pg_temp.srt(ARRAY['c_in2', 'cur_chan', 'g_early', 'g_late', 'dba1', 'dba2']),
          'speaker requester: alice and her linked alice2, including what alice2 wrote before the link was verified');
SELECT is(pg_temp.s('dm_you', 'dm', 'zebra', 'you'), ARRAY['c_you'], 'speaker you: only the agent''s messages');
SELECT is(pg_temp.s('dm_null', 'dm', 'zebra', NULL), (SELECT pg_temp.srt(ARRAY(SELECT h.message_id FROM unnest((s.r).hits) h))
                                                        FROM searches s WHERE s.label = 'dm'),
          'speaker null means anyone');
SELECT results_eq(
    $$SELECT h.message_id, h.speaker_role, h.speaker_id FROM searches s, unnest((s.r).hits) h WHERE s.label = 'dm'
       ORDER BY h.message_id COLLATE "C"$$,
    $$VALUES ('c_in1'::text, 'other'::text, 'el-bob'::text), ('c_in2', 'requester', 'el-alice'), ('c_you', 'you', 'el-bot'),
             ('cur_chan', 'requester', 'el-alice'), ('dba1', 'requester', 'el-alice'), ('dba2', 'requester', 'el-alice2'),
             ('g_early', 'requester', 'el-alice'), ('g_late', 'requester', 'el-alice'), ('load_chan', 'other', 'el-bob')$$,
    'speaker_role: requester (incl. the linked account), you (the agent), other');
SELECT is((pg_temp.hit('dm', 'dba2')).reasons->>'actor', (pg_temp.hit('dm', 'dba1')).reasons->>'actor',
          'ranking actor signal: a linked account''s message counts as the requester''s');

-- ------------------------------------------------------------------ time filters
SELECT is(pg_temp.s('dm_time', 'dm', 'zebra', 'anyone', '2026-02-10 00:00+00', '2026-05-10 00:00+00'),
          pg_temp.srt(ARRAY['c_in1', 'g_early', 'g_late']),
          'time: p_after inclusive (c_in1 at exactly p_after), p_before exclusive (c_in2 at exactly p_before is out)');
SELECT is(pg_temp.s('dm_after', 'dm', 'zebra', 'anyone', '2026-06-26 12:00+00', NULL), ARRAY['cur_chan'],
          'time: p_after alone');
SELECT is(pg_temp.s('dm_before', 'dm', 'zebra', 'anyone', NULL, '2026-02-02 12:00+00'), ARRAY['dba1'],
          'time: p_before alone (dba2 at exactly p_before excluded)');

-- ------------------------------------------------------------------ neighbours
SELECT is(pg_temp.s('nb', 'nb', 'needle', 'you', '2026-06-01 10:05+00', NULL), ARRAY['nb5'], 'neighbour world: one hit');
SELECT is(pg_temp.ids((pg_temp.hit('nb', 'nb5')).before), ARRAY['nb2', 'nb1'],
          'neighbours before: nearest first, skipping a deleted message and one whose lineage the audience cannot read; speaker and time filters do not apply');
SELECT is(pg_temp.ids((pg_temp.hit('nb', 'nb5')).after), ARRAY['nb6', 'nb8'],
          'neighbours after: nearest first, two, skipping a deleted message');
SELECT is(((pg_temp.hit('nb', 'nb5')).before->0) - 'sent_at',
          jsonb_build_object('message_id', 'nb2', 'conversation_id', 'el-nb', 'speaker_id', 'el-bob',
                             'speaker_role', 'other', 'body', 'second filler', 'body_truncated', false),
          'a neighbour carries its fields and current text, not cut');
SELECT is(((pg_temp.hit('nb', 'nb5')).before->1->>'sent_at')::timestamptz, '2026-06-01 10:01+00'::timestamptz,
          'a neighbour carries its sent_at');
SELECT is((pg_temp.hit('nb', 'nb5')).before->1->>'speaker_role', 'requester', 'a neighbour carries its speaker role');
SELECT is(pg_temp.s('nb_loaded', 'nb_loaded', 'needle'), ARRAY['nb5'], 'loaded-message run: same hit');
SELECT is(pg_temp.ids((pg_temp.hit('nb_loaded', 'nb5')).after), ARRAY['nb8', 'nb9'],
          'neighbours skip a loaded message');
SELECT is(pg_temp.ids((pg_temp.hit('nb_loaded', 'nb5')).before), ARRAY['nb2', 'nb1'], 'neighbours before unchanged');
SELECT is(pg_temp.s('nbp', 'nbp', 'pin'), ARRAY['p2'], 'perspective neighbour world: one hit');
SELECT is(pg_temp.ids((pg_temp.hit('nbp', 'p2')).before), ARRAY['p1'],
          'neighbours before: a message from before the agent joined is skipped (only one eligible)');
SELECT is(pg_temp.ids((pg_temp.hit('nbp', 'p2')).after), ARRAY['p3', 'p5'],
          'neighbours after: a message sent while the agent was away is skipped');
SELECT is(pg_temp.s('nbp_six', 'nbp', 'six'), ARRAY['p6'], 'perspective neighbour world: a hit in the later window');
SELECT is(pg_temp.ids((pg_temp.hit('nbp_six', 'p6')).before), ARRAY['p5', 'p3'],
          'neighbours before: past the time the agent was away, on into the window that ended before the hit');
SELECT is(pg_temp.s('nbp_carol', 'nbp_carol', 'pin'), ARRAY['p2'], 'audience neighbour world: one hit');
SELECT is(pg_temp.ids((pg_temp.hit('nbp_carol', 'p2')).before), '{}'::text[],
          'neighbours before: a message an audience member (carol) could not read is skipped');
SELECT is(pg_temp.ids((pg_temp.hit('nbp_carol', 'p2')).after), ARRAY['p3'],
          'neighbours after: only what the agent and the whole audience could read (carol left at 10:22, p5 is later)');

-- ------------------------------------------------------------------ alive: the recheck against canonical events
-- White-box: a deletion that lands between the projection read and the
-- canonical recheck (a concurrent delete) is simulated by writing the deleted
-- event directly, leaving the projection row in place.
DO $ghost$
DECLARE
    k bigint;
    e bigint;
BEGIN
    PERFORM history.post_message('ghost', 'el-chan', 'el-bob', 'ghost story', '2026-06-10 12:00+00');
    FOREACH k IN ARRAY ARRAY[(SELECT message_key FROM history.messages WHERE message_id = 'ghost'),
                             (SELECT message_key FROM history.messages WHERE message_id = 'nb6')] LOOP
        INSERT INTO history.message_events (message_key, event_kind, body, occurred_at)
        VALUES (k, 'deleted', NULL, '2026-06-11 00:00+00') RETURNING event_key INTO e;
        UPDATE history.messages SET current_event_key = e WHERE message_key = k;
    END LOOP;
END
$ghost$;
SELECT is(pg_temp.s('solo_ghost', 'solo', 'ghost'), '{}'::text[],
          'alive: a hit whose latest canonical event is a deletion is not returned, whatever the projection says');
SELECT is((SELECT e.excluded_alive FROM history.conversation_search_events e
            WHERE e.search_event_id = (SELECT (s.r).search_event_id FROM searches s WHERE s.label = 'solo_ghost')), 1,
          'audit: it is counted under excluded_alive');
SELECT is(pg_temp.s('nb_ghost', 'nb', 'needle'), ARRAY['nb5'], 'alive recheck for neighbours: same hit');
SELECT is(pg_temp.ids((pg_temp.hit('nb_ghost', 'nb5')).after), ARRAY['nb8'],
          'alive: a neighbour deleted in canonical events is not returned (not even as context)');

-- ------------------------------------------------------------------ evidence records the proofs relied on
CREATE FUNCTION pg_temp.proofs(p_run text, p_message text) RETURNS text[] LANGUAGE sql AS
$$ SELECT ARRAY(SELECT p.proof_id COLLATE "default" FROM history.run_evidence ev
                  JOIN history.runs r ON r.run_key = ev.run_key
                  JOIN history.messages m ON m.message_key = ev.message_key
                  JOIN history.identity_proofs p ON p.proof_key = ANY (ev.proof_keys)
                 WHERE r.run_token = (SELECT token FROM pg_temp.runs WHERE name = p_run) AND m.message_id = p_message
                 ORDER BY 1) $$;
SELECT is(pg_temp.proofs('dm', 'dba2'), ARRAY['el-p1'],
          'evidence: a message shown through the link records the proof it relied on');
SELECT is(pg_temp.proofs('dm', 'c_in1'), '{}'::text[], 'evidence: a message that relied on no link records no proof');
SELECT is(pg_temp.proofs('chan_alice2', 'dba1'), ARRAY['el-p1'],
          'evidence: alice2 shown alice''s DM through the link records the proof');

-- ------------------------------------------------------------------ revoking the link
SELECT is(pg_temp.s('chan_alice2_req', 'chan_alice2', 'zebra', 'requester'), pg_temp.srt(ARRAY['g2', 'dba1', 'dba2']),
          'while linked: alice2''s messages are the requester''s (alice''s)');
SELECT lives_ok($$SELECT history.revoke_proof('el-p1', '2026-06-30 00:00+00')$$, 'revoke the alice/alice2 proof');
SELECT is(pg_temp.s('dm_revoked', 'dm', 'zebra'),
          pg_temp.srt(ARRAY['c_in1', 'c_in2', 'c_you', 'load_chan', 'cur_chan', 'g_early', 'g_late', 'dba1']),
          'after revocation: alice is no longer shown alice2''s DM (same run)');
SELECT is(pg_temp.s('chan_alice2_revoked', 'chan_alice2', 'zebra'), pg_temp.srt(ARRAY['g2', 'dba2']),
          'after revocation: alice2 is no longer shown alice''s DM');
SELECT is(pg_temp.s('chan_alice2_req_revoked', 'chan_alice2', 'zebra', 'requester'), '{}'::text[],
          'after revocation: alice2''s messages are no longer the requester''s');

SELECT * FROM finish();
ROLLBACK;
