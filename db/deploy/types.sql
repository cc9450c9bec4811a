-- Deploy history-search:types to pg
-- requires: schema
--
-- The public result types of search_history (other services read them by
-- name: fields may be added, never renamed) and the internal row type the
-- function ranks into.
BEGIN;
SET LOCAL ROLE history_owner;

CREATE TYPE history.search_hit AS (
    message_id      text,
    conversation_id text,
    sent_at         timestamptz,
    speaker_id      text,
    speaker_role    text,
    body            text,
    score           float8,
    reasons         jsonb,
    before          jsonb,
    after           jsonb,
    -- body holds only the first search_settings.max_returned_body_bytes octets of the text
    body_truncated  boolean
);
COMMENT ON TYPE history.search_hit IS 'One search hit with its ranking reasons and up to two neighbours on each side';

CREATE TYPE history.search_result AS (
    status           text,
    search_event_id  uuid,
    budget_used      integer,
    budget_remaining integer,
    hits             history.search_hit[]
);
COMMENT ON TYPE history.search_result IS 'What search_history returns: status, audit event id, budget and hits best first';

CREATE TYPE history._ranked_candidate AS (
    message_key      bigint,
    message_id       text COLLATE "C",
    conversation_key bigint,
    author_key       bigint,
    sent_at          timestamptz,
    visible          tstzmultirange,
    text_score       float8,
    coverage         float8,
    actor            float8,
    conversation     float8,
    participation    float8,
    recency          float8,
    total            float8,
    matched_terms    text[],
    named_speaker    float8
);
COMMENT ON TYPE history._ranked_candidate IS 'Internal: an eligible match with its weighted ranking components';

RESET ROLE;
COMMIT;
