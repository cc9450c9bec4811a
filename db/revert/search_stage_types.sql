-- Revert history-search:search_stage_types from pg
BEGIN;
SET LOCAL ROLE history_owner;

DROP TYPE history._counting_pass;
DROP TYPE history._ranking_pass;
DROP TYPE history._search_scope;
DROP TYPE history._admission;
DROP TYPE history._admitted_hit;
DROP TYPE history._hit_neighbours;

RESET ROLE;
COMMIT;
