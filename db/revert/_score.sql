-- Revert history-search:_score from pg: back to its @v0.1.0 version
-- (another signature: the new function goes first).
DROP FUNCTION history._score(bigint[], tsvector[], bigint[], bigint[], timestamptz[], text[], text[], bigint[],
                             bigint, bigint[], bigint[], history.search_settings, timestamptz, tstzrange, tsquery);
\ir ../deploy/_score@v0.1.0.sql
