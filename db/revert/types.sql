-- Revert history-search:types from pg
BEGIN;

DROP TYPE history._ranked_candidate;
DROP TYPE history.search_result;
DROP TYPE history.search_hit;

COMMIT;
