-- Deploy history-search:search_stage_types to pg
-- requires: types
-- The typed values the search's stages pass to each other (docs/decisions.md,
-- "The search in order"): a hit's neighbours, an admitted hit, and what
-- admission under the budget decided.
BEGIN;
SET LOCAL ROLE history_owner;

CREATE TYPE history._hit_neighbours AS (
    before bigint[],  -- up to two eligible messages before the hit, nearest first
    after  bigint[]   -- up to two after it, nearest first
);
COMMENT ON TYPE history._hit_neighbours IS 'Internal: a hit''s eligible neighbours (history._hit_neighbours)';

CREATE TYPE history._admitted_hit AS (
    rank        integer,   -- its place in the ranking
    message_key bigint,
    before      bigint[],  -- the neighbours admitted with it, nearest first
    after       bigint[]
);
COMMENT ON TYPE history._admitted_hit IS 'Internal: a hit admitted under the budget, with its admitted neighbours';

CREATE TYPE history._admission AS (
    hits       history._admitted_hit[],  -- in rank order
    selected   bigint[],  -- every message shown (hits and neighbours), first shown first
    new_keys   bigint[],  -- those the run did not hold yet: what the budget paid for
    remaining  integer,   -- the budget left
    withheld   boolean,   -- something was left out for the budget
    budget_out integer,   -- hits left out for the budget
    dead       integer    -- hits deleted since they were found
);
COMMENT ON TYPE history._admission IS 'Internal: what admission under the run''s budget decided (history._admit_hits)';

RESET ROLE;
COMMIT;
