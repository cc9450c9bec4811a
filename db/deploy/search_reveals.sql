-- Deploy history-search:search_reveals to pg
-- requires: run_tables
-- requires: types
--
-- A search's hits between the commit of its audit and their reveal
-- (docs/decisions.md, "Audit before reveal"). history._search_history writes a
-- row in the search's own transaction; history._search_reveal hands the hits
-- out and deletes the row only once that transaction has committed. The hits'
-- matched terms are kept as positions in the query's term list, never as
-- words: the query's words are stored nowhere. UNLOGGED: a crash loses only
-- hits nobody has seen yet (their audit is committed and stays).
BEGIN;
SET LOCAL ROLE history_owner;

CREATE UNLOGGED TABLE history.search_reveals (
    search_event_id uuid NOT NULL,
    tenant_key      integer NOT NULL DEFAULT 1,
    run_key         bigint NOT NULL,
    -- The top-level transaction that wrote the search: its hits are revealed
    -- only once pg_xact_status says it committed.
    written_by      xid8 NOT NULL,
    -- What the query was analysed with, so the reveal reads the same terms.
    languages       regconfig[] NOT NULL,
    max_terms       integer NOT NULL,
    hits            history.search_hit[] NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (search_event_id, tenant_key)
);
CREATE INDEX search_reveals_run_idx ON history.search_reveals (run_key);
COMMENT ON TABLE history.search_reveals IS
    'Internal: a search''s hits until their audit is committed and they are revealed (matched terms as term positions)';

RESET ROLE;
COMMIT;
