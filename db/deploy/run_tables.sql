-- Deploy history-search:run_tables to pg
-- requires: core_tables
--
-- Runs (one agent turn), the evidence they received, the audit of every
-- search and the run trace. Also the digest keys, readable by the owner only.
BEGIN;
SET LOCAL ROLE history_owner;

CREATE TABLE history.runs (
    run_key              bigint GENERATED ALWAYS AS IDENTITY,
    -- The destination conversation's tenant (core_tables: history.tenants).
    tenant_key           integer NOT NULL DEFAULT 1,
    run_token            uuid NOT NULL DEFAULT pg_catalog.gen_random_uuid(),
    agent_key            bigint NOT NULL REFERENCES history.accounts,
    conversation_key     bigint NOT NULL,
    requester_key        bigint NOT NULL REFERENCES history.accounts,
    current_message_key  bigint NOT NULL,
    loaded_message_keys  bigint[] NOT NULL DEFAULT '{}',
    -- The explicit audience as given, or null: the default audience is the
    -- destination's open memberships at the time it is needed.
    explicit_audience_keys bigint[],
    -- The audience searches use: explicit, or the default at begin_run.
    audience_keys        bigint[] NOT NULL,
    started_at           timestamptz NOT NULL DEFAULT pg_catalog.now(),
    ended_at             timestamptz,
    -- Kept on the row (not counted from run_evidence) so that every search
    -- UPDATEs it: concurrent searches of one run then serialise, and a
    -- REPEATABLE READ caller gets 40001 instead of overrunning the budget.
    evidence_count       integer NOT NULL DEFAULT 0 CHECK (evidence_count BETWEEN 0 AND 400),
    search_count         integer NOT NULL DEFAULT 0,
    PRIMARY KEY (run_key, tenant_key),
    UNIQUE (run_token, tenant_key),
    FOREIGN KEY (conversation_key, tenant_key) REFERENCES history.conversations,
    FOREIGN KEY (current_message_key, tenant_key) REFERENCES history.messages
);
CREATE INDEX runs_agent_idx ON history.runs (agent_key, started_at);
COMMENT ON TABLE history.runs IS 'One turn of one agent, begun by the trusted runtime';
COMMENT ON COLUMN history.runs.evidence_count IS 'Distinct evidence messages received so far (budget: 400)';

CREATE TABLE history.query_digest_keys (
    digest_key_id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- 48 bytes from three gen_random_uuid() (core since PostgreSQL 13, from the
    -- server's strong random source): 366 random bits, no extension needed.
    secret        bytea NOT NULL CHECK (pg_catalog.octet_length(secret) >= 32)
                  DEFAULT pg_catalog.uuid_send(pg_catalog.gen_random_uuid())
                          OPERATOR(pg_catalog.||) pg_catalog.uuid_send(pg_catalog.gen_random_uuid())
                          OPERATOR(pg_catalog.||) pg_catalog.uuid_send(pg_catalog.gen_random_uuid()),
    created_at    timestamptz NOT NULL DEFAULT pg_catalog.now(),
    retired_at    timestamptz
);
COMMENT ON TABLE history.query_digest_keys IS 'HMAC keys of the audit digest; the newest unretired key signs new events';
INSERT INTO history.query_digest_keys DEFAULT VALUES;

CREATE TABLE history.conversation_search_events (
    event_key            bigint GENERATED ALWAYS AS IDENTITY,
    tenant_key           integer NOT NULL DEFAULT 1,
    search_event_id      uuid NOT NULL DEFAULT pg_catalog.gen_random_uuid(),
    run_key              bigint NOT NULL,
    agent_key            bigint NOT NULL REFERENCES history.accounts,
    searched_at          timestamptz NOT NULL DEFAULT pg_catalog.now(),
    query_digest         bytea NOT NULL,
    digest_key_id        integer NOT NULL REFERENCES history.query_digest_keys,
    speaker              text NOT NULL CHECK (speaker IN ('anyone', 'requester', 'you')),
    sent_after           timestamptz,
    sent_before          timestamptz,
    effective_limit      integer NOT NULL,
    query_term_count     integer NOT NULL,
    hit_message_ids      text[] NOT NULL,
    selected_message_ids text[] NOT NULL,
    -- One object per hit, best first: message id and its numeric ranking
    -- components (never the matched terms: they are query words).
    hit_rankings         jsonb NOT NULL,
    -- One object per selected message: message id, role (hit/neighbour), the hit it belongs to.
    selections           jsonb NOT NULL,
    excluded_speaker     integer NOT NULL,
    excluded_time        integer NOT NULL,
    excluded_perspective integer NOT NULL,
    excluded_audience    integer NOT NULL,
    excluded_lineage     integer NOT NULL,
    excluded_alive       integer NOT NULL,
    excluded_in_context  integer NOT NULL,
    excluded_budget      integer NOT NULL,
    -- A pass reached search_settings.max_candidates: older matches were not examined.
    candidates_capped    boolean NOT NULL,
    status               text NOT NULL CHECK (status IN ('ok', 'search_budget_exhausted')),
    budget_used          integer NOT NULL,
    budget_remaining     integer NOT NULL,
    PRIMARY KEY (event_key, tenant_key),
    UNIQUE (search_event_id, tenant_key),
    FOREIGN KEY (run_key, tenant_key) REFERENCES history.runs
);
CREATE INDEX conversation_search_events_run_idx ON history.conversation_search_events (run_key, event_key);
CREATE INDEX conversation_search_events_agent_idx ON history.conversation_search_events (agent_key, searched_at);
CREATE INDEX conversation_search_events_time_idx ON history.conversation_search_events (searched_at);
COMMENT ON TABLE history.conversation_search_events IS 'Audit: one row per search_history call, written in its transaction';

CREATE TABLE history.run_evidence (
    tenant_key       integer NOT NULL DEFAULT 1,
    run_key          bigint NOT NULL,
    message_key      bigint NOT NULL,
    event_key        bigint NOT NULL,
    -- Identity proofs this message's eligibility or speaker match relied on.
    proof_keys       bigint[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (run_key, message_key, tenant_key),
    FOREIGN KEY (run_key, tenant_key) REFERENCES history.runs,
    FOREIGN KEY (message_key, tenant_key) REFERENCES history.messages,
    FOREIGN KEY (event_key, tenant_key) REFERENCES history.conversation_search_events
);
COMMENT ON TABLE history.run_evidence IS 'Distinct messages a run received from its searches';

CREATE TABLE history.run_trace (
    trace_key     bigint GENERATED ALWAYS AS IDENTITY,
    tenant_key    integer NOT NULL DEFAULT 1,
    run_key       bigint NOT NULL,
    entry_kind    text NOT NULL CHECK (entry_kind IN ('begin', 'search_audit', 'delivery', 'end')),
    recorded_at   timestamptz NOT NULL DEFAULT pg_catalog.now(),
    event_key     bigint,
    detail        jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (trace_key, tenant_key),
    FOREIGN KEY (run_key, tenant_key) REFERENCES history.runs,
    FOREIGN KEY (event_key, tenant_key) REFERENCES history.conversation_search_events
);
CREATE INDEX run_trace_run_idx ON history.run_trace (run_key, trace_key);
COMMENT ON TABLE history.run_trace IS 'What happened in each run, in order; never query text';

RESET ROLE;
COMMIT;
