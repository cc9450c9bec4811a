-- Revert history-search:_candidate_strategy from pg
BEGIN;

DROP FUNCTION history._candidate_strategy(integer, float8, float8, integer, float8, float8);

COMMIT;
