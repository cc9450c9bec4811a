-- Deploy history-search:reindex_documents to pg
-- requires: core_tables _document_vector _refresh_name_terms
-- The procedure lives in db/functions/reindex_documents.sql; its progress table is here.
BEGIN;
SET LOCAL ROLE history_owner;

-- One row: the re-index under way (finished_at null) or the last one.
CREATE TABLE history.reindex_progress (
    singleton        boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    started_at       timestamptz NOT NULL,
    -- Every projection row with a key up to this one has been rebuilt.
    last_message_key bigint NOT NULL,
    rows_done        bigint NOT NULL,
    rows_changed     bigint NOT NULL,
    finished_at      timestamptz
);
COMMENT ON TABLE history.reindex_progress IS 'Progress of history.reindex_documents (restart point)';

-- reindex_documents: rebuild every search projection row with the current
-- text analysis (_document_vector in its conversation's language), in
-- message-key order, one committed batch at a time (docs/text-analysis.md).
--   * Restartable: progress is committed with each batch in
--     history.reindex_progress; run again after an interruption and it
--     continues after the last committed batch (p_restart => true starts over).
--   * No long lock: a batch holds its messages FOR SHARE (an edit or delete
--     of one of them waits for that batch, and a message edited or deleted
--     meanwhile is left to the edit, which indexes it itself); nothing locks
--     history.messages as a whole.
--   * Only rows whose vector changed are written.
--   * Last, every account's name terms are re-made (_refresh_name_terms).
--   * One NOTICE per batch: 'reindex: <done> of <total> rows (<pct>%), <changed> changed'.
-- A procedure that commits (written COMMIT AND NO CHAIN, so that no line of
-- a deploy script reads as a stray transaction statement): CALL it at top
-- level, outside a transaction block, as the schema owner or a superuser
-- (it runs as its caller).
CREATE OR REPLACE PROCEDURE history.reindex_documents(p_batch_size integer DEFAULT 1000, p_restart boolean DEFAULT false)
LANGUAGE plpgsql
AS $procedure$
DECLARE
    v_progress   history.reindex_progress;
    v_total      bigint;
    v_batch_last bigint;
    v_rows       bigint;
    v_changed    bigint;
BEGIN
    IF p_batch_size IS NULL OR p_batch_size < 1 THEN
        RAISE EXCEPTION 'p_batch_size must be at least 1, got %', coalesce(p_batch_size::text, 'NULL')
            USING ERRCODE = 'HS001';
    END IF;

    SELECT * INTO v_progress FROM history.reindex_progress p WHERE p.finished_at IS NULL;
    IF FOUND AND NOT coalesce(p_restart, false) THEN
        RAISE NOTICE 'reindex: resuming after message key % (% rows done, started %)',
            v_progress.last_message_key, v_progress.rows_done, v_progress.started_at;
    ELSE
        INSERT INTO history.reindex_progress AS p (singleton, started_at, last_message_key, rows_done, rows_changed, finished_at)
        VALUES (true, pg_catalog.clock_timestamp(), 0, 0, 0, NULL)
        ON CONFLICT (singleton) DO UPDATE
           SET started_at = excluded.started_at, last_message_key = 0, rows_done = 0, rows_changed = 0, finished_at = NULL
        RETURNING * INTO v_progress;
    END IF;
    COMMIT AND NO CHAIN;

    SELECT pg_catalog.count(*) INTO v_total FROM history.message_search_documents;
    LOOP
        WITH batch AS MATERIALIZED (
            SELECT d.message_key FROM history.message_search_documents d
             WHERE d.message_key OPERATOR(pg_catalog.>) v_progress.last_message_key
             ORDER BY d.message_key
             LIMIT p_batch_size
        ), analysed AS MATERIALIZED (
            SELECT m.message_key, history._document_vector(e.body, c.language) AS document
              FROM batch b
              JOIN history.messages m ON m.message_key OPERATOR(pg_catalog.=) b.message_key
              JOIN history.message_events e ON e.event_key OPERATOR(pg_catalog.=) m.current_event_key
              JOIN history.conversations c ON c.conversation_key OPERATOR(pg_catalog.=) m.conversation_key
             WHERE e.event_kind OPERATOR(pg_catalog.<>) 'deleted'
               FOR SHARE OF m
        ), written AS (
            UPDATE history.message_search_documents d SET document = a.document
              FROM analysed a
             WHERE d.message_key OPERATOR(pg_catalog.=) a.message_key
               AND d.document IS DISTINCT FROM a.document
            RETURNING d.message_key
        )
        SELECT (SELECT pg_catalog.max(b.message_key) FROM batch b), (SELECT pg_catalog.count(*) FROM batch),
               (SELECT pg_catalog.count(*) FROM written)
          INTO v_batch_last, v_rows, v_changed;
        EXIT WHEN v_batch_last IS NULL;

        UPDATE history.reindex_progress p
           SET last_message_key = v_batch_last, rows_done = p.rows_done OPERATOR(pg_catalog.+) v_rows,
               rows_changed = p.rows_changed OPERATOR(pg_catalog.+) v_changed
        RETURNING * INTO v_progress;
        COMMIT AND NO CHAIN;
        RAISE NOTICE 'reindex: % of % rows (%), % changed, last message key %',
            v_progress.rows_done, v_total,
            pg_catalog.round(100.0 * v_progress.rows_done / GREATEST(v_total, 1), 1)::text OPERATOR(pg_catalog.||) '%',
            v_progress.rows_changed, v_progress.last_message_key;
    END LOOP;

    -- The people's names are analysed as queries are: their stored terms too.
    PERFORM history._refresh_name_terms(NULL, true);
    UPDATE history.reindex_progress p SET finished_at = pg_catalog.clock_timestamp() RETURNING * INTO v_progress;
    COMMIT AND NO CHAIN;
    RAISE NOTICE 'reindex: done, % rows, % changed, in %',
        v_progress.rows_done, v_progress.rows_changed,
        pg_catalog.date_trunc('second', v_progress.finished_at OPERATOR(pg_catalog.-) v_progress.started_at);
END
$procedure$;

COMMENT ON PROCEDURE history.reindex_documents(integer, boolean) IS
    'Rebuild every search projection row with the current analysis, in committed batches (restartable)';
REVOKE ALL ON PROCEDURE history.reindex_documents(integer, boolean) FROM PUBLIC;

RESET ROLE;
COMMIT;
