-- Deploy history-search:lifecycle_tables to pg
-- requires: core_tables run_tables
--
-- What erasing an account and purging old audit need of the tables:
--   * an event whose body was erased (message_events.erased_at) holds no body;
--   * the log of erasures (who, when, how many; never text);
--   * the indexes that find an author's messages, ended and open runs, and the
--     evidence and trace rows of a search event (without them each purged
--     event's foreign-key check would scan run_evidence and run_trace).
BEGIN;
SET LOCAL ROLE history_owner;

ALTER TABLE history.message_events ADD COLUMN erased_at timestamptz;
COMMENT ON COLUMN history.message_events.erased_at IS
    'Set when history.erase_account removed this event''s body (the time passed to it); the body is then null';
ALTER TABLE history.message_events DROP CONSTRAINT message_events_check;
ALTER TABLE history.message_events ADD CONSTRAINT message_events_body_check
    CHECK ((event_kind = 'deleted' OR erased_at IS NOT NULL) = (body IS NULL));

CREATE TABLE history.account_erasures (
    erasure_key     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_key     bigint NOT NULL REFERENCES history.accounts,
    -- The time passed to erase_account (an event time, like delete_message's).
    erased_at       timestamptz NOT NULL,
    recorded_at     timestamptz NOT NULL DEFAULT pg_catalog.now(),
    -- The login that asked (the session user, not the definer).
    requested_by    text NOT NULL DEFAULT pg_catalog."session_user"(),
    messages_erased integer NOT NULL CHECK (messages_erased >= 0),
    events_erased   integer NOT NULL CHECK (events_erased >= 0)
);
CREATE INDEX account_erasures_account_idx ON history.account_erasures (account_key, erasure_key);
COMMENT ON TABLE history.account_erasures IS
    'One row per erase_account call: the account, when, who asked, how many messages and events lost their text';

-- An author's messages (erase_account).
CREATE INDEX messages_author_idx ON history.messages (author_key, message_key);
-- Ended runs by age (purge) and open runs by age (the status view).
CREATE INDEX runs_ended_idx ON history.runs (ended_at, run_key) WHERE ended_at IS NOT NULL;
CREATE INDEX runs_open_idx ON history.runs (started_at) WHERE ended_at IS NULL;
-- The rows that reference a search event (the foreign-key checks of purge's deletes).
CREATE INDEX run_evidence_event_idx ON history.run_evidence (event_key, tenant_key);
CREATE INDEX run_trace_event_idx ON history.run_trace (event_key, tenant_key) WHERE event_key IS NOT NULL;

RESET ROLE;
COMMIT;
