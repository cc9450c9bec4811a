-- Revert history-search:_admit_hits from pg
BEGIN;

DROP FUNCTION history._admit_hits(bigint[], history._hit_neighbours[], bigint[], bigint[], integer);

COMMIT;
