-- Revert history-search:_search_hits from pg
BEGIN;

DROP FUNCTION history._search_hits(history._admission, history._ranked_candidate[], text[], bigint, bigint[], integer);

COMMIT;
