-- Revert history-search:_score from pg: back to its @v0.4.0 version.
-- That version's deploy begins by dropping 0.1.0's thirteen-argument
-- function, which is long gone here: drop this one (its result columns
-- differ) and give it one to drop, then run it as released.
BEGIN;
SET LOCAL ROLE history_owner;
DROP FUNCTION history._score(bigint[], tsvector[], bigint[], bigint[], timestamptz[], text[], text[], bigint[],
                             bigint, bigint[], bigint[], history.search_settings, timestamptz, tstzrange, tsquery);
CREATE FUNCTION history._score(bigint[], tsvector[], bigint[], bigint[], timestamptz[], text[], text[], bigint[],
                               bigint, bigint[], bigint[], history.search_settings, timestamptz)
    RETURNS void LANGUAGE sql AS 'SELECT NULL::void';
RESET ROLE;
COMMIT;

\ir ../deploy/_score@v0.4.0.sql
