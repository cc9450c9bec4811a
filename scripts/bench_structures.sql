-- The alternative structures for "the newest N matches", built beside the
-- projection of a loaded bench database (not a migration; what they showed
-- is in docs/decisions.md, "Performance: what was tried and what was kept").
-- Run with psql against a database loaded by `history-search bench`, then
-- scripts/bench_structures.py; scripts/bench_structures_drop.sql removes it all.
\timing on
SET maintenance_work_mem = '1GB';

-- RUM with sent_at in the posting lists (Debian: postgresql-15-rum).
CREATE EXTENSION IF NOT EXISTS rum;
CREATE INDEX msd_rum_idx ON history.message_search_documents
    USING rum (document rum_tsvector_addon_ops, sent_at) WITH (attach = 'sent_at', to = 'document');
-- The same, posting lists ordered by sent_at.
CREATE INDEX msd_rum_ord_idx ON history.message_search_documents
    USING rum (document rum_tsvector_addon_ops, sent_at) WITH (attach = 'sent_at', to = 'document', order_by_attach = 't');

-- btree_gin: the conversation inside the text index.
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE INDEX msd_conv_doc_idx ON history.message_search_documents
    USING gin (conversation_key, document) WITH (fastupdate = off);

-- A copy of the projection partitioned by month, with the projection's indexes.
CREATE TABLE history.msd_part (LIKE history.message_search_documents) PARTITION BY RANGE (sent_at);
DO $$
DECLARE
    m date;
BEGIN
    FOR m IN SELECT generate_series(date_trunc('month', min(sent_at)), max(sent_at), interval '1 month')::date
               FROM history.message_search_documents LOOP
        EXECUTE format('CREATE TABLE history.msd_part_%s PARTITION OF history.msd_part FOR VALUES FROM (%L) TO (%L)',
                       to_char(m, 'YYYYMM'), m, (m + interval '1 month')::date);
    END LOOP;
END
$$;
INSERT INTO history.msd_part SELECT * FROM history.message_search_documents;
ALTER TABLE history.msd_part ADD PRIMARY KEY (message_key, sent_at);
CREATE INDEX msd_part_document_idx ON history.msd_part USING gin (document) WITH (fastupdate = off);
CREATE INDEX msd_part_order_idx ON history.msd_part (conversation_key, sent_at, message_id);
CREATE INDEX msd_part_recent_idx ON history.msd_part (sent_at, message_id);
VACUUM ANALYZE history.msd_part;
ANALYZE history.message_search_documents;

-- Walk the partitions newest first, the text plan in each, until p_count.
CREATE OR REPLACE FUNCTION public.exp_part_newest(p_query tsquery, p_agent bigint, p_conversations bigint[], p_count integer)
RETURNS SETOF bigint LANGUAGE plpgsql AS $f$
DECLARE
    v_part regclass;
    v_got  bigint[] := '{}';
    v_more bigint[];
    v_filter text := CASE WHEN p_conversations IS NULL
        THEN 'EXISTS (SELECT 1 FROM history.memberships m WHERE m.account_key = $2 AND m.conversation_key = d.conversation_key)'
        ELSE 'd.conversation_key = ANY ($3)' END;
BEGIN
    PERFORM set_config('enable_indexscan', 'off', true);
    FOR v_part IN SELECT i.inhrelid::regclass FROM pg_inherits i
                   WHERE i.inhparent = 'history.msd_part'::regclass
                   ORDER BY pg_get_expr((SELECT c.relpartbound FROM pg_class c WHERE c.oid = i.inhrelid), i.inhrelid) DESC LOOP
        EXECUTE 'SELECT ARRAY(SELECT d.message_key FROM ' || v_part || ' d WHERE d.document @@ $1 AND ' || v_filter ||
                ' ORDER BY d.sent_at DESC, d.message_id DESC LIMIT $4)'
          INTO v_more USING p_query, p_agent, p_conversations, p_count - cardinality(v_got);
        v_got := v_got || v_more;
        EXIT WHEN cardinality(v_got) >= p_count;
    END LOOP;
    PERFORM set_config('enable_indexscan', 'on', true);
    RETURN QUERY SELECT x FROM unnest(v_got) x;
END
$f$;

-- _newest_matches' choice, with the partition walk where it would read many rows.
CREATE OR REPLACE FUNCTION public.exp_hybrid(p_query tsquery, p_agent bigint, p_conversations bigint[], p_count integer)
RETURNS SETOF bigint LANGUAGE plpgsql AS $f$
DECLARE
    v_plan json; v_matches float8; v_total float8; v_set_rows float8;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) SELECT 1 FROM history.message_search_documents d WHERE d.document @@ $1' INTO v_plan USING p_query;
    v_matches := (v_plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
    SELECT c.reltuples INTO v_total FROM pg_class c WHERE c.oid = 'history.message_search_documents'::regclass;
    IF v_matches <= 20 * p_count THEN
        RETURN QUERY SELECT message_key FROM history._newest_matches(1, p_query, p_agent, p_conversations, NULL, false, NULL, NULL, NULL, p_count, 'text');
        RETURN;
    END IF;
    IF cardinality(p_conversations) <= 1000 THEN
        EXECUTE 'EXPLAIN (FORMAT JSON) SELECT 1 FROM history.message_search_documents d WHERE d.conversation_key = ANY ($1)' INTO v_plan USING p_conversations;
        v_set_rows := (v_plan -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
        IF least(v_set_rows, p_count * greatest(v_total, 1) / v_matches) + 10 * cardinality(p_conversations) < v_matches + v_set_rows THEN
            RETURN QUERY SELECT message_key FROM history._newest_matches(1, p_query, p_agent, p_conversations, NULL, false, NULL, NULL, NULL, p_count, 'walk');
            RETURN;
        END IF;
    END IF;
    RETURN QUERY SELECT * FROM public.exp_part_newest(p_query, p_agent, p_conversations, p_count);
END
$f$;

SELECT c.relname, pg_size_pretty(pg_relation_size(c.oid))
  FROM pg_class c
 WHERE c.relname IN ('msd_rum_idx', 'msd_rum_ord_idx', 'msd_conv_doc_idx', 'message_search_documents_document_idx');

-- Postings ordered by time: one row per lexeme of each live message (the "terms" variant).
CREATE TABLE history.msd_terms AS
SELECT l.lexeme, d.sent_at, d.message_id, d.conversation_key, d.message_key
  FROM history.message_search_documents d, unnest(tsvector_to_array(d.document)) l(lexeme);
CREATE INDEX msd_terms_time_idx ON history.msd_terms (lexeme, sent_at, message_id) INCLUDE (conversation_key, message_key);
VACUUM (FREEZE, ANALYZE) history.msd_terms;  -- all-visible: index-only scans
