-- Revert history-search:_score from pg
BEGIN;

DROP FUNCTION history._score(bigint[], tsvector[], bigint[], bigint[], timestamptz[], text[], text[], bigint[], bigint, bigint[], bigint[], history.search_settings, timestamptz);

COMMIT;
