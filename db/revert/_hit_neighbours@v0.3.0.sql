-- Revert history-search:_hit_neighbours from pg
BEGIN;

DROP FUNCTION history._hit_neighbours(history._ranked_candidate[], bigint[], bigint[], tstzmultirange[], bigint[]);

COMMIT;
