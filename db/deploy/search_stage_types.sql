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

CREATE TYPE history._search_scope AS (
    agent_key              bigint,
    conversation_key       bigint,            -- the run's destination
    requester_accounts     bigint[],          -- the requester and the accounts linked to it
    audience               bigint[],          -- the destination audience (empty: none)
    context                bigint[],          -- the run's current and loaded messages
    agent_conversations    bigint[],          -- the agent's conversations (NULL: too many to list)
    audience_conversations bigint[],          -- the audience's windows, parallel arrays
    audience_windows       tstzmultirange[],
    eligible_conversations bigint[],          -- the audience's windows cut to the agent's
    eligible_windows       tstzmultirange[]
);
COMMENT ON TYPE history._search_scope IS 'Internal: what a run may see, as the search''s stages take it';

CREATE TYPE history._ranking_pass AS (
    ranked              history._ranked_candidate[],  -- best first
    excluded_lineage    integer,
    excluded_in_context integer,
    capped              boolean   -- more matches than max_candidates inside the windows
);
COMMENT ON TYPE history._ranking_pass IS 'Internal: the ranking pass''s candidates, best first, and its counts (history._ranking_pass)';

CREATE TYPE history._counting_pass AS (
    excluded_speaker     integer,
    excluded_time        integer,
    excluded_perspective integer,
    excluded_audience    integer,
    capped               boolean   -- more matches than max_counted_candidates
);
COMMENT ON TYPE history._counting_pass IS 'Internal: the counting pass''s exclusion counts (history._counting_pass)';

RESET ROLE;
COMMIT;
