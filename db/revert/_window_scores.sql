-- Revert history-search:_window_scores from pg
BEGIN;

DROP FUNCTION history._window_scores(bigint[], text[], timestamptz[], float8[], tsvector[], bigint[], tsvector[],
                                     text[], float8[], history.search_settings, integer);

COMMIT;
