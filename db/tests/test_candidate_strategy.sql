-- _candidate_strategy: the choice of _newest_matches's strategy is a pure
-- function of its estimates (matches M, projection rows T, listed
-- conversations, the rows S they hold, hours of history). Each case names
-- the costs (rows read, by the estimates) that decide it.
BEGIN;
SELECT plan(11);

SELECT is(history._candidate_strategy(2001, 40000, 1e7, NULL), 'text',
          'M = 20 x p_count: few enough matches to read them all (text)');
SELECT is(history._candidate_strategy(2001, 40021, 1e7, NULL), 'slice',
          'one match more, all of an agent''s conversations: slices');
SELECT is(history._candidate_strategy(2001, 1e6, 1e7, 6000), 'slice',
          'a list too long to estimate (over 5 000 conversations): slices');
SELECT is(history._candidate_strategy(2001, 1e6, 1e7, 10), NULL,
          'a list and many matches: the choice needs the list''s rows and the hours');
SELECT is(history._candidate_strategy(2001, 1e6, 1e7, 10, 5000, 10000), 'walk',
          'ten conversations holding 5 000 rows: a walk reads at most them (5 100) where text reads 20 600');
SELECT is(history._candidate_strategy(2001, 1e6, 1e7, 20, 2e6, 10000), 'slice',
          'twenty conversations holding two million rows: slices (4 702) before a walk (20 210) or text (260 000)');
SELECT is(history._candidate_strategy(2001, 5e5, 1e7, 2000, 60000, 10000), 'text',
          'a long list holding few rows: text (143 000) over slices of every conversation (467 100); no walk over 1 000');
SELECT is(history._candidate_strategy(2001, 2e5, 1e7, 3000, 5e5, 10000), 'slice',
          'a long list holding half a million rows: slices (80 240) over text (185 000)');
SELECT is(history._candidate_strategy(2001, 1e6, 1e7, 10, 5000, 10000),
          history._candidate_strategy(2001, 1e6, 1e7, 10, 5000, 10000), 'the same estimates, the same answer');
SELECT is((SELECT p.provolatile FROM pg_proc p
            WHERE p.oid = 'history._candidate_strategy(integer, float8, float8, integer, float8, float8)'::regprocedure),
          'i', 'it is declared immutable: it reads no table');
SELECT is(history._candidate_strategy(1, 21, 100, 1, 100, 1), 'walk',
          'one wanted row in one conversation of 100 rows with 21 matches: a walk (14.8) reads less than text (23.4)');

SELECT * FROM finish();
ROLLBACK;
