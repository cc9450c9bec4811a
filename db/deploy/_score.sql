-- Deploy history-search:_score to pg
-- requires: _score@v0.4.0
-- The function lives in db/functions/_score.sql. It gained a result column
-- (term_rarity, for the window stage): the earlier one goes first.
-- Reworked after v0.4.0: The window stage needs each query term's rarity: a result column term_rarity
BEGIN;
SET LOCAL ROLE history_owner;

DROP FUNCTION history._score(bigint[], tsvector[], bigint[], bigint[], timestamptz[], text[], text[], bigint[],
                             bigint, bigint[], bigint[], history.search_settings, timestamptz, tstzrange, tsquery);
\ir ../functions/_score.sql

RESET ROLE;
COMMIT;
