-- Ranking (SPEC §3 "Ranking", docs/decisions.md "Ranking", history._score):
-- term rarity, length normalisation, occurrence labels, reasons that add up,
-- and statistics that come only from what the audience may see.
BEGIN;
SELECT plan(67);

DO $world$
BEGIN
    PERFORM history.upsert_account('k-bot', 'agent', 'Assistant');
    PERFORM history.upsert_account('k-ann', 'person', 'Ann');
    PERFORM history.upsert_account('k-ben', 'person', 'Ben');
    PERFORM history.upsert_conversation('k-pub', 'group');
    PERFORM history.upsert_conversation('k-priv', 'direct');
    PERFORM history.add_member('k-pub', 'k-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('k-pub', 'k-ann', '2026-01-01 00:00+00');
    -- Ben is away for February: what k-pub says then is not his to see.
    PERFORM history.add_member('k-pub', 'k-ben', '2026-01-01 00:00+00');
    PERFORM history.remove_member('k-pub', 'k-ben', '2026-02-01 00:00+00');
    PERFORM history.add_member('k-pub', 'k-ben', '2026-03-01 00:00+00');
    PERFORM history.add_member('k-priv', 'k-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('k-priv', 'k-ann', '2026-01-01 00:00+00');

    -- "thanks" is everywhere, "museum" is rare.
    PERFORM history.post_message('k-t1', 'k-pub', 'k-ben', 'thanks for the update', '2026-01-02 10:00+00');
    PERFORM history.post_message('k-t2', 'k-pub', 'k-ann', 'thanks a lot', '2026-01-02 11:00+00');
    PERFORM history.post_message('k-t3', 'k-pub', 'k-ben', 'ok thanks', '2026-01-02 12:00+00');
    PERFORM history.post_message('k-t4', 'k-pub', 'k-ann', 'thanks again', '2026-01-20 12:00+00');
    PERFORM history.post_message('k-museum', 'k-pub', 'k-ben', 'the museum opens at nine', '2026-01-03 12:00+00');
    -- the same match, in a short and in a long message
    PERFORM history.post_message('k-short', 'k-pub', 'k-ann', 'lighthouse photos', '2026-01-05 12:00+00');
    PERFORM history.post_message('k-long', 'k-pub', 'k-ann',
        'lighthouse trip report with harbour cliffs seagulls ferry timetable sandwiches weather notes', '2026-01-05 12:00+00');
    -- labels: a whole token (A) against a part derived from an identifier (D), set below
    PERFORM history.post_message('k-whole', 'k-pub', 'k-ben', 'yaml everywhere now', '2026-01-06 12:00+00');
    PERFORM history.post_message('k-part', 'k-pub', 'k-ben', 'yaml everywhere again', '2026-01-06 12:00+00');
    PERFORM history.post_message('k-cur', 'k-pub', 'k-ann', 'question', '2026-06-01 12:00+00');
    PERFORM history.post_message('k-priv-cur', 'k-priv', 'k-ann', 'question', '2026-06-01 12:00+00');
END
$world$;
-- White-box: label the two yaml documents as the text analysis does for a
-- whole token (A) and for an identifier's part (D, next to an A token).
UPDATE history.message_search_documents SET document = 'yaml:1A everywher:2A' WHERE message_id = 'k-whole';
UPDATE history.message_search_documents SET document = 'yaml:1D everywher:2A' WHERE message_id = 'k-part';

CREATE TEMP TABLE results (label text PRIMARY KEY, r history.search_result) ON COMMIT DROP;
CREATE FUNCTION pg_temp.s(p_label text, p_query text, p_audience text[] DEFAULT NULL,
                          p_conversation text DEFAULT 'k-pub') RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
    v history.search_result;
BEGIN
    v := history._search_history(
        history.begin_run('k-bot', p_conversation, 'k-ann', CASE p_conversation WHEN 'k-pub' THEN 'k-cur' ELSE 'k-priv-cur' END,
                          '{}', p_audience),
        p_query, 'anyone', NULL, NULL, 20);
    INSERT INTO pg_temp.results VALUES (p_label, v);
    RETURN ARRAY(SELECT h.message_id FROM unnest(v.hits) h);
END
$$;
-- Each hit as (id, score, reasons): what the searcher is told.
CREATE FUNCTION pg_temp.told(p_label text) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(format('%s %s %s', h.message_id, h.score, h.reasons), E'\n' ORDER BY o)
      FROM pg_temp.results r, unnest((r.r).hits) WITH ORDINALITY h(message_id, conversation_id, sent_at, speaker_id,
                                                                   speaker_role, body, score, reasons, before, after, o)
     WHERE r.label = p_label $$;
CREATE FUNCTION pg_temp.hit(p_label text, p_message text) RETURNS history.search_hit LANGUAGE sql AS $$
    SELECT h FROM pg_temp.results r, unnest((r.r).hits) h WHERE r.label = p_label AND h.message_id = p_message $$;

UPDATE history.search_settings SET actor_weight = 0, recency_weight = 0;

-- ------------------------------------------------------------------ rarity, length, labels
SELECT is((pg_temp.s('rare', 'thanks museum'))[1], 'k-museum',
          'a message matching only the rare term outranks those matching only the common one');
SELECT ok((pg_temp.hit('rare', 'k-museum')).reasons->>'text' > (pg_temp.hit('rare', 'k-t1')).reasons->>'text'
          AND ((pg_temp.hit('rare', 'k-museum')).reasons->>'text')::float8
              > ((pg_temp.hit('rare', 'k-t2')).reasons->>'text')::float8,
          'the rare term''s text score is the larger');
SELECT is(((pg_temp.hit('rare', 'k-museum')).reasons->>'text')::float8,
          (SELECT text_weight FROM history.search_settings),
          'the best match''s text score is text_weight (text is relative to the best match)');
SELECT ok(((pg_temp.hit('rare', 'k-museum')).reasons->>'coverage')::float8
          > 4 * ((pg_temp.hit('rare', 'k-t1')).reasons->>'coverage')::float8,
          'coverage weighs a matched term by its rarity: the rare term is most of it');

SELECT is(pg_temp.s('length', 'lighthouse'), ARRAY['k-short', 'k-long'],
          'the same match in a shorter message ranks higher (length normalisation)');
SELECT ok(((pg_temp.hit('length', 'k-short')).reasons->>'text')::float8
          > ((pg_temp.hit('length', 'k-long')).reasons->>'text')::float8,
          'and its text score is strictly larger');

SELECT is(pg_temp.s('labels', 'yaml'), ARRAY['k-whole', 'k-part'],
          'a whole-token match (A) outranks a derived part (D)');
UPDATE history.search_settings SET derived_term_weight = 1;
SELECT is(pg_temp.s('labels-equal', 'yaml'), ARRAY['k-part', 'k-whole'],
          'with derived_term_weight 1 the labels no longer matter (tie: by message id)');
SELECT is((pg_temp.hit('labels-equal', 'k-part')).score, (pg_temp.hit('labels-equal', 'k-whole')).score,
          'and the two score alike');
UPDATE history.search_settings SET derived_term_weight = DEFAULT;

SELECT ok((SELECT bool_and(abs((h.reasons->>'text')::float8 + (h.reasons->>'coverage')::float8
                               + (h.reasons->>'actor')::float8 + (h.reasons->>'conversation')::float8
                               + (h.reasons->>'participation')::float8 + (h.reasons->>'recency')::float8
                               + (h.reasons->>'named_speaker')::float8 + (h.reasons->>'session')::float8
                               + (h.reasons->>'period')::float8 + (h.reasons->>'tells_time')::float8
                               + (h.reasons->>'window_coverage')::float8 + (h.reasons->>'feedback')::float8
                               - h.score) < 1e-12 AND (h.reasons->>'total')::float8 = h.score)
             FROM results r, unnest((r.r).hits) h),
          'every hit''s components add up to its total, which is its score');

-- ------------------------------------------------------------------ names, recency (the shipped defaults)
UPDATE history.search_settings SET actor_weight = DEFAULT, recency_weight = DEFAULT;
DO $names$
BEGIN
    PERFORM history.upsert_account('k-mel', 'person', 'Melanie');
    PERFORM history.upsert_account('k-car', 'person', 'Caroline');
    PERFORM history.upsert_conversation('k-chat', 'group');
    PERFORM history.add_member('k-chat', 'k-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('k-chat', 'k-mel', '2026-01-01 00:00+00');
    PERFORM history.add_member('k-chat', 'k-car', '2026-01-01 00:00+00');
    PERFORM history.post_message('k-content', 'k-chat', 'k-mel', 'We took the kids to the science museum, they loved the dinosaurs', '2026-01-10 12:00+00');
    PERFORM history.post_message('k-hey', 'k-chat', 'k-car', 'Hey Melanie! How did it go?', '2026-05-20 12:00+00');
    PERFORM history.post_message('k-thanks', 'k-chat', 'k-car', 'Thanks, Melanie!', '2026-05-21 12:00+00');
    PERFORM history.post_message('k-go', 'k-chat', 'k-car', 'I have to go now, Melanie', '2026-05-22 12:00+00');
    -- the same words from each of them, at the same time
    PERFORM history.post_message('k-said-car', 'k-chat', 'k-car', 'the pottery class starts monday', '2026-03-01 12:00+00');
    PERFORM history.post_message('k-said-mel', 'k-chat', 'k-mel', 'the pottery class starts monday', '2026-03-01 12:00+00');
    -- a strong old match and a weak new one; two equal matches a month apart
    PERFORM history.post_message('k-old-strong', 'k-chat', 'k-car', 'the observatory telescope night was magical', '2026-01-02 12:00+00');
    PERFORM history.post_message('k-new-weak', 'k-chat', 'k-car', 'what a night', '2026-05-30 12:00+00');
    PERFORM history.post_message('k-twin-old', 'k-chat', 'k-car', 'violin lesson', '2026-04-01 12:00+00');
    PERFORM history.post_message('k-twin-new', 'k-chat', 'k-car', 'violin lesson', '2026-05-01 12:00+00');
    PERFORM history.post_message('k-chat-cur', 'k-chat', 'k-car', 'question', '2026-06-01 12:00+00');
END
$names$;
CREATE FUNCTION pg_temp.chat(p_label text, p_query text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
    v history.search_result;
BEGIN
    v := history._search_history(history.begin_run('k-bot', 'k-chat', 'k-car', 'k-chat-cur'), p_query, 'anyone', NULL, NULL, 20);
    INSERT INTO pg_temp.results VALUES (p_label, v);
    RETURN ARRAY(SELECT h.message_id FROM unnest(v.hits) h);
END
$$;

SELECT is((pg_temp.chat('vocative', 'When did Melanie go to the museum?'))[1], 'k-content',
          'a member''s name is weak evidence: "Hey Melanie!" and "Thanks, Melanie!" do not outrank the content');
SELECT ok(((pg_temp.hit('vocative', 'k-content')).reasons->>'text')::float8
          > ((pg_temp.hit('vocative', 'k-thanks')).reasons->>'text')::float8,
          'on its text score alone, too');
SELECT is((pg_temp.chat('named', 'What did Melanie say about the pottery class?'))[1:2], ARRAY['k-said-mel', 'k-said-car'],
          'the person the query names is preferred as the speaker of equal words');
SELECT is(ARRAY[((pg_temp.hit('named', 'k-said-mel')).reasons->>'named_speaker')::float8,
                ((pg_temp.hit('named', 'k-said-car')).reasons->>'named_speaker')::float8],
          ARRAY[(SELECT named_speaker_weight FROM history.search_settings), 0::float8],
          'reasons.named_speaker is named_speaker_weight for the named person''s message, 0 for the other''s');
-- A stranger (an account outside the run) named like a query word moves nothing: the
-- name lookup reads only the run's people.
DO $$ BEGIN PERFORM history.upsert_account('k-stranger', 'person', 'Pottery Class'); END $$;
SELECT is(pg_temp.told((SELECT 'named-stranger' WHERE pg_temp.chat('named-stranger',
                            'What did Melanie say about the pottery class?') IS NOT NULL)),
          pg_temp.told('named'),
          'a stranger''s display name changes no score, reason or order (the name lookup reads the run''s people)');
-- The names' terms are kept with the accounts (_refresh_name_terms), in the query languages they were made in.
SELECT is((SELECT name_terms FROM history.accounts WHERE account_id = 'k-mel'), ARRAY['melani'],
          'upsert_account keeps the name''s terms as a query would have them');
SELECT is((SELECT name_languages FROM history.accounts WHERE account_id = 'k-mel'), history._query_languages()::text[],
          'and the query languages they were made in');
-- The stored terms are what a search reads (a planted name makes "Carla" name Melanie) ...
UPDATE history.accounts SET name_terms = ARRAY['carla'] WHERE account_id = 'k-mel';
SELECT is((pg_temp.chat('stored', 'What did Carla say about the pottery class?'))[1], 'k-said-mel',
          'a search reads the name terms stored with the account');
-- ... unless they were made in other languages: then the name is analysed as the search runs.
UPDATE history.accounts SET name_languages = ARRAY['simple'] WHERE account_id = 'k-mel';
SELECT is((pg_temp.chat('stale', 'What did Melanie say about the pottery class?'))[1:2], ARRAY['k-said-mel', 'k-said-car'],
          'terms made in other languages are not used: the name is analysed by the search');
DO $$ BEGIN PERFORM history.upsert_conversation('k-french', 'group', NULL, 'french'); END $$;
SELECT is((SELECT count(*) FROM history.accounts WHERE name_languages IS DISTINCT FROM history._query_languages()::text[]), 0::bigint,
          'the first conversation in a new language re-makes every account''s name terms with it');
SELECT is((SELECT name_terms FROM history.accounts WHERE account_id = 'k-mel'),
          history._query_terms('Melanie', ARRAY['english', 'french']::regconfig[], 100),
          'and the planted terms are gone: the name''s terms in English and French');
DO $$ BEGIN PERFORM history.upsert_account('k-mel', 'person', 'Mel Jones'); END $$;
SELECT is((SELECT name_terms FROM history.accounts WHERE account_id = 'k-mel'),
          history._query_terms('Mel Jones', ARRAY['english', 'french']::regconfig[], 100),
          'a new display name has new terms');
SELECT is((pg_temp.chat('recency', 'observatory telescope night'))[1], 'k-old-strong',
          'recency never buries a clearly stronger match (a five-month-old full match beats a new partial one)');
SELECT is(pg_temp.chat('twins', 'violin lesson'), ARRAY['k-twin-new', 'k-twin-old'],
          'between equal matches the newer ranks first');
SELECT ok((pg_temp.hit('twins', 'k-twin-new')).score > (pg_temp.hit('twins', 'k-twin-old')).score,
          'and by score (recency breaks the near-tie), not only by the tie rule');

-- ------------------------------------------------------------------ session: the matches around a match
DO $session$
BEGIN
    -- a strong match, a weak one five minutes later (its session), the same weak one ten days later alone
    PERFORM history.post_message('k-kayak-strong', 'k-chat', 'k-mel', 'kayak harbour tour, kayak harbour again', '2026-04-10 12:00+00');
    PERFORM history.post_message('k-kayak-near', 'k-chat', 'k-car', 'kayak', '2026-04-10 12:05+00');
    PERFORM history.post_message('k-kayak-far', 'k-chat', 'k-car', 'kayak', '2026-04-20 12:00+00');
    -- k-pub at the edge of Ben's absence (until 1 March): one match he may not see, one he may, ten minutes apart
    PERFORM history.post_message('k-gap-hidden', 'k-pub', 'k-ann', 'zeppelin hangar zeppelin hangar', '2026-02-28 23:55+00');
    PERFORM history.post_message('k-gap-seen', 'k-pub', 'k-ann', 'zeppelin', '2026-03-01 00:05+00');
END
$session$;
SELECT is(pg_temp.chat('session', 'kayak harbour'), ARRAY['k-kayak-strong', 'k-kayak-near', 'k-kayak-far'],
          'a weak match in the session of a strong one outranks the same weak match alone (which is newer)');
SELECT is(((pg_temp.hit('session', 'k-kayak-near')).reasons->>'session')::float8,
          (SELECT session_weight FROM history.search_settings),
          'reasons.session is session_weight times the best text score of its session (here the best match''s: 1)');
SELECT is(((pg_temp.hit('session', 'k-kayak-far')).reasons->>'session')::float8, 0::float8,
          'a match with no other match within session_gap has no session evidence');
SELECT is(((pg_temp.hit((SELECT CASE WHEN pg_temp.s('gap-ann', 'zeppelin hangar', ARRAY['k-ann']) IS NOT NULL
                                     THEN 'gap-ann' END), 'k-gap-seen')).reasons->>'session')::float8,
          (SELECT session_weight FROM history.search_settings),
          'for an audience that may see both, the match ten minutes earlier is session evidence');
SELECT is(((pg_temp.hit((SELECT CASE WHEN pg_temp.s('gap-ben', 'zeppelin hangar', ARRAY['k-ben']) IS NOT NULL
                                     THEN 'gap-ben' END), 'k-gap-seen')).reasons->>'session')::float8,
          0::float8,
          'for an audience that may not see it, it is none: session evidence comes only from what the audience may see');

-- ------------------------------------------------------------------ period: the time the query names
SELECT is(history._query_period('When did she go to the museum in May 2023?', '2026-03-10 12:00+00'),
          tstzrange('2023-05-01 00:00+00', '2023-06-01 00:00+00'), 'a month and year name that month');
SELECT is(history._query_period('What did Nate do on 25 May, 2022?', '2026-03-10 12:00+00'),
          tstzrange('2022-05-25 00:00+00', '2022-05-26 00:00+00'), 'a day, month and year name that day (UTC)');
SELECT is(history._query_period('the forest picture shared on December 1,2023', '2026-03-10 12:00+00'),
          tstzrange('2023-12-01 00:00+00', '2023-12-02 00:00+00'), 'so does month, day and year');
SELECT is(history._query_period('what happened on 31 February 2023', '2026-03-10 12:00+00'),
          tstzrange('2023-02-28 00:00+00', '2023-03-01 00:00+00'), 'a day past the month''s end is its last day, not an error');
SELECT is(history._query_period('Which career-high performances did John achieve in 2023?', '2026-03-10 12:00+00'),
          tstzrange('2023-01-01 00:00+00', '2024-01-01 00:00+00'), 'a year alone names that year');
SELECT is(history._query_period('Which outdoor spot did Joanna visit in May?', '2026-03-10 12:00+00'),
          tstzrange('2025-05-01 00:00+00', '2025-06-01 00:00+00'), 'a month without a year is the latest one that began before now');
SELECT is(ARRAY[history._query_period('what did we decide last month', '2026-03-10 12:00+00'),
                history._query_period('the link from yesterday', '2026-03-10 12:00+00')],
          ARRAY[tstzrange('2026-02-01 00:00+00', '2026-03-01 00:00+00'), tstzrange('2026-03-09 00:00+00', '2026-03-10 00:00+00')],
          'relative forms count from now');
SELECT is(ARRAY[history._query_period('may I ask what the plan is', '2026-03-10 12:00+00'),
                history._query_period('ticket 12345 and version 20.4', '2026-03-10 12:00+00'),
                history._query_period('', '2026-03-10 12:00+00')],
          ARRAY[NULL, NULL, NULL]::tstzrange[], 'a query that names no time has no period ("may" the verb, longer numbers)');
SELECT is(pg_temp.chat('period', 'violin lesson in April 2026')::text[], ARRAY['k-twin-old', 'k-twin-new'],
          'between equal matches, the one sent in the period the query names ranks first (though older)');
SELECT is(((pg_temp.hit('period', 'k-twin-old')).reasons->>'period')::float8,
          (SELECT period_weight FROM history.search_settings), 'reasons.period is period_weight inside the period');
SELECT ok(((pg_temp.hit('period', 'k-twin-new')).reasons->>'period')::float8
              BETWEEN 0.5 * (SELECT period_weight FROM history.search_settings)
                  AND (SELECT period_weight FROM history.search_settings) - 1e-9,
          'and less outside it: half a day after its end, within one period_half_life');

-- ------------------------------------------------------------------ tells_time: a question asking when
DO $when$
BEGIN
    -- the same match, shorter and newer without a time, longer and older with one, days from anything else
    PERFORM history.post_message('k-zoo-plain', 'k-chat', 'k-mel', 'the zoo trip was fun', '2026-04-25 12:00+00');
    PERFORM history.post_message('k-zoo-said', 'k-chat', 'k-mel', 'the zoo trip last saturday was fun', '2026-04-15 12:00+00');
END
$when$;
SELECT is(pg_temp.chat('what', 'What was the zoo trip like?'), ARRAY['k-zoo-plain', 'k-zoo-said'],
          'for a question that does not ask when, the shorter, newer match ranks first');
SELECT is(pg_temp.chat('when', 'When was the zoo trip?'), ARRAY['k-zoo-said', 'k-zoo-plain'],
          'for one that asks when, the match that tells a time ("last saturday") ranks first');
SELECT is(ARRAY[((pg_temp.hit('when', 'k-zoo-said')).reasons->>'tells_time')::float8,
                ((pg_temp.hit('when', 'k-zoo-plain')).reasons->>'tells_time')::float8,
                ((pg_temp.hit('what', 'k-zoo-said')).reasons->>'tells_time')::float8],
          ARRAY[(SELECT tells_time_weight FROM history.search_settings), 0, 0]::float8[],
          'reasons.tells_time is tells_time_weight only when the query asks when and the match tells a time');
SELECT is(ARRAY[history._query_asks_when('How long has Tim played the violin?', '{english}') IS NOT NULL,
                history._query_asks_when('since when?', '{english}') IS NOT NULL,
                history._query_asks_when('whenever you like', '{english}') IS NOT NULL,
                history._query_asks_when('the long way home', '{english}') IS NOT NULL],
          ARRAY[true, true, false, false], '"when" and "how long" ask when; "whenever" and "long" alone do not');

-- ------------------------------------------------------------------ statistics come only from what the audience may see
SELECT ok(cardinality(pg_temp.s('before', 'thanks museum lighthouse photos')) >= 6, 'the search finds its matches');

DO $private$
DECLARE
    k integer;
BEGIN
    -- A private direct conversation of Ann's, and k-pub while Ben was away:
    -- neither may be shown to Ben, both full of the query's terms.
    FOR k IN 1 .. 40 LOOP
        PERFORM history.post_message('k-p' || k, 'k-priv', 'k-ann',
                                     'museum museum lighthouse photos thanks museum', timestamptz '2026-01-04 00:00+00' + k * interval '1 hour');
        PERFORM history.post_message('k-away' || k, 'k-pub', 'k-ann',
                                     'museum lighthouse lighthouse thanks', timestamptz '2026-02-04 00:00+00' + k * interval '1 hour');
    END LOOP;
    PERFORM history.edit_message('k-p1', 'photos photos photos', '2026-05-01 00:00+00');
    PERFORM history.delete_message('k-p2', '2026-05-01 00:00+00');
    PERFORM history.edit_message('k-away1', 'thanks thanks', '2026-05-01 00:00+00');
    PERFORM history.delete_message('k-away2', '2026-05-01 00:00+00');
END
$private$;

SELECT is(pg_temp.s('after', 'thanks museum lighthouse photos'), pg_temp.s('before-again', 'thanks museum lighthouse photos'),
          'same hits twice after the private writes (the comparison below is stable)');
SELECT is(pg_temp.told('after'), pg_temp.told('before'),
          'messages the audience may not see change no returned id, order, score or reason');
SELECT ok((SELECT bool_or(h ~ '^k-p[0-9]') FROM unnest(pg_temp.s('ann-priv', 'thanks museum lighthouse photos',
                                                                  ARRAY['k-ann'], 'k-priv')) h)
          AND (SELECT bool_or(h ~ '^k-away') FROM unnest(pg_temp.s('ann-pub', 'lighthouse', ARRAY['k-ann'])) h),
          'the private messages are matches for an audience that may see them (the test is not vacuous)');
SELECT is((SELECT e.hit_rankings FROM history.conversation_search_events e
            WHERE e.search_event_id = (SELECT (r.r).search_event_id FROM results r WHERE r.label = 'after')),
          (SELECT e.hit_rankings FROM history.conversation_search_events e
            WHERE e.search_event_id = (SELECT (r.r).search_event_id FROM results r WHERE r.label = 'before')),
          'the audit records the same ranking components before and after');

-- ------------------------------------------------------------------ signals see only what the audience may see
-- Rae asks; Rae and Rob are the audience. Each conversation has one visible
-- match by Rob; what Rae wrote there differs: visible, written before Rob
-- joined (Rob may not see it), deleted.
DO $signals$
BEGIN
    PERFORM history.upsert_account('k-rae', 'person', 'Rae');
    PERFORM history.upsert_account('k-rob', 'person', 'Rob');
    PERFORM history.upsert_conversation('k-sig-dest', 'group');
    PERFORM history.upsert_conversation('k-sig-vis', 'group');
    PERFORM history.upsert_conversation('k-sig-late', 'group');
    PERFORM history.upsert_conversation('k-sig-del', 'group');
    PERFORM history.add_member(c, a, '2026-01-01 00:00+00')
       FROM unnest(ARRAY['k-sig-dest', 'k-sig-vis', 'k-sig-late', 'k-sig-del']) c,
            unnest(ARRAY['k-bot', 'k-rae']) a;
    PERFORM history.add_member(c, 'k-rob', '2026-01-01 00:00+00')
       FROM unnest(ARRAY['k-sig-dest', 'k-sig-vis', 'k-sig-del']) c;
    PERFORM history.add_member('k-sig-late', 'k-rob', '2026-03-01 00:00+00');
    PERFORM history.post_message('k-rae-vis', 'k-sig-vis', 'k-rae', 'morning all', '2026-02-01 12:00+00');
    PERFORM history.post_message('k-rae-late', 'k-sig-late', 'k-rae', 'morning all', '2026-02-01 12:00+00');
    PERFORM history.post_message('k-rae-del', 'k-sig-del', 'k-rae', 'morning all', '2026-02-01 12:00+00');
    PERFORM history.delete_message('k-rae-del', '2026-02-02 12:00+00');
    PERFORM history.post_message('k-zep-vis', 'k-sig-vis', 'k-rob', 'zeppelin hangar tour', '2026-04-01 12:00+00');
    PERFORM history.post_message('k-zep-late', 'k-sig-late', 'k-rob', 'zeppelin hangar tour', '2026-04-01 12:00+00');
    PERFORM history.post_message('k-zep-del', 'k-sig-del', 'k-rob', 'zeppelin hangar tour', '2026-04-01 12:00+00');
    PERFORM history.post_message('k-sig-cur', 'k-sig-dest', 'k-rae', 'question', '2026-06-01 12:00+00');
END
$signals$;
CREATE FUNCTION pg_temp.srt(p text[]) RETURNS text[] LANGUAGE sql IMMUTABLE AS
$$ SELECT coalesce(array_agg(x ORDER BY x COLLATE "C"), '{}') FROM unnest(p) x $$;
CREATE FUNCTION pg_temp.sig(p_label text, p_query text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE
    v history.search_result;
BEGIN
    v := history._search_history(history.begin_run('k-bot', 'k-sig-dest', 'k-rae', 'k-sig-cur', '{}', ARRAY['k-rae', 'k-rob']),
                                 p_query, 'anyone', NULL, NULL, 20);
    INSERT INTO pg_temp.results VALUES (p_label, v);
    RETURN ARRAY(SELECT h.message_id FROM unnest(v.hits) h);
END
$$;
SELECT is(pg_temp.srt(pg_temp.sig('signals', 'zeppelin')), ARRAY['k-zep-del', 'k-zep-late', 'k-zep-vis'],
          'the three matches are eligible');
SELECT is(((pg_temp.hit('signals', 'k-zep-vis')).reasons->>'participation')::float8,
          (SELECT participation_weight FROM history.search_settings),
          'participation counts a message of the requester the audience may see');
SELECT is(((pg_temp.hit('signals', 'k-zep-late')).reasons->>'participation')::float8, 0::float8,
          'participation does not count the requester''s message written before an audience member joined');
SELECT is(((pg_temp.hit('signals', 'k-zep-del')).reasons->>'participation')::float8, 0::float8,
          'participation does not count the requester''s deleted message');
SELECT is((pg_temp.sig('signals-order', 'zeppelin'))[1], 'k-zep-vis',
          'so the hit whose conversation the requester visibly took part in ranks first');

-- ------------------------------------------------------------------ query analysis: only the run's languages
-- A German conversation the agent never joined changes nothing in how an
-- English run reads its query ("die" is a German stop word, an English word).
DO $$ BEGIN
    PERFORM history.post_message('k-die', 'k-sig-vis', 'k-rob', 'the basil will die without water', '2026-04-02 12:00+00');
END $$;
SELECT is(pg_temp.sig('die-before', 'die'), ARRAY['k-die'], 'an English "die" finds the English message');
DO $$ BEGIN
    PERFORM history.upsert_conversation('k-german', 'group', NULL, 'german');
    PERFORM history.add_member('k-german', 'k-ben', '2026-01-01 00:00+00');
    PERFORM history.post_message('k-german-m', 'k-german', 'k-ben', 'die Katze schläft', '2026-04-02 12:00+00');
END $$;
SELECT is(pg_temp.sig('die-after', 'die'), ARRAY['k-die'],
          'a German conversation the run may not see changes neither the hits ...');
SELECT is((pg_temp.hit('die-after', 'k-die')).reasons->'matched_terms', '["die"]'::jsonb,
          '... nor the matched terms');

-- ------------------------------------------------------------------ the window stage (history._window_scores)
DO $windows$
BEGIN
    -- the same words twice, days apart; the older one's next message holds the query's other word
    PERFORM history.post_message('k-win-a', 'k-chat', 'k-car', 'the yak farm', '2026-05-10 12:00+00');
    PERFORM history.post_message('k-win-b', 'k-chat', 'k-mel', 'we bought wool there', '2026-05-10 13:00+00');
    PERFORM history.post_message('k-win-f1', 'k-chat', 'k-mel', 'nice weather', '2026-05-11 12:00+00');
    PERFORM history.post_message('k-win-f2', 'k-chat', 'k-car', 'indeed', '2026-05-11 13:00+00');
    PERFORM history.post_message('k-win-c', 'k-chat', 'k-car', 'the yak farm', '2026-05-12 12:00+00');
    -- one word, three matches: the shortest is the best text; two share "okapi"
    PERFORM history.post_message('k-fb-a', 'k-chat', 'k-car', 'zebra crossing near the okapi house', '2026-05-14 12:00+00');
    PERFORM history.post_message('k-fb-b', 'k-chat', 'k-car', 'zebra okapi feeding time', '2026-05-14 13:00+00');
    PERFORM history.post_message('k-fb-c', 'k-chat', 'k-car', 'zebra sticker', '2026-05-14 14:00+00');
END
$windows$;
SELECT ok(array_position(x, 'k-win-a') < array_position(x, 'k-win-c'),
          'of two equal matches, the one whose window (two eligible messages each side) holds the query''s other word ranks first (though older)')
  FROM (SELECT pg_temp.chat('win', 'yak wool') x) y;
SELECT ok(abs(((pg_temp.hit('win', 'k-win-a')).reasons->>'window_coverage')::float8
              - (SELECT window_coverage_weight FROM history.search_settings)) < 1e-12
          AND ((pg_temp.hit('win', 'k-win-c')).reasons->>'window_coverage')::float8
              < (SELECT window_coverage_weight FROM history.search_settings),
          'reasons.window_coverage is window_coverage_weight for a window holding every query word, less for one that does not');
SELECT is(pg_temp.chat('fb', 'zebra'), ARRAY['k-fb-b', 'k-fb-a', 'k-fb-c'],
          'feedback: the matches sharing a word ("okapi") with the best windows rank above a shorter match without it');
SELECT is(ARRAY[((pg_temp.hit('fb', 'k-fb-a')).reasons->>'feedback')::float8, ((pg_temp.hit('fb', 'k-fb-c')).reasons->>'feedback')::float8],
          ARRAY[(SELECT feedback_weight FROM history.search_settings), 0]::float8[],
          'reasons.feedback is feedback_weight for the matches holding the expansion word, 0 for the other');
-- The hits' neighbours are the ones the stage walked: one walk a search, with or without the stage.
CREATE FUNCTION pg_temp.walks(p_label text, p_query text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    v_before bigint := (SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions
                         WHERE schemaname = 'history' AND funcname = '_hit_neighbours');
BEGIN
    PERFORM pg_temp.chat(p_label, p_query);
    RETURN (SELECT coalesce(sum(calls), 0) FROM pg_stat_xact_user_functions
             WHERE schemaname = 'history' AND funcname = '_hit_neighbours') - v_before;
END $$;
SET LOCAL track_functions = 'pl';
SELECT is(pg_temp.walks('win-walk', 'yak wool'), 1::bigint,
          'one neighbour walk a search: the hits are shown with the neighbours the window stage walked');
UPDATE history.search_settings SET window_coverage_weight = 0, feedback_weight = 0;
SELECT is(pg_temp.walks('win-walk-off', 'yak wool'), 1::bigint, 'and one without the stage (the hits'' own)');
SELECT is(ARRAY[(pg_temp.hit('win-walk-off', 'k-win-a')).before, (pg_temp.hit('win-walk-off', 'k-win-a')).after],
          ARRAY[(pg_temp.hit('win', 'k-win-a')).before, (pg_temp.hit('win', 'k-win-a')).after],
          'a hit''s neighbours are the same whether the stage walked them or the search did');
SELECT ok(array_position(x, 'k-win-c') < array_position(x, 'k-win-a') AND (pg_temp.chat('fb-off', 'zebra'))[1] = 'k-fb-c',
          'without the window stage the newer equal match and the shortest match rank first')
  FROM (SELECT pg_temp.chat('win-off', 'yak wool') x) y;
SELECT is(ARRAY[((pg_temp.hit('win-off', 'k-win-a')).reasons->>'window_coverage')::float8,
                ((pg_temp.hit('fb-off', 'k-fb-a')).reasons->>'feedback')::float8],
          ARRAY[0, 0]::float8[], 'and its reasons are 0, not missing');
UPDATE history.search_settings SET window_coverage_weight = DEFAULT, feedback_weight = DEFAULT;

SELECT * FROM finish();
ROLLBACK;
