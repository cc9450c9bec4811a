-- Deploy history-search:post_message to pg
-- The function lives in db/functions/post_message.sql.
-- Reworked after v0.2.0: Tenants: names ids within a tenant (p_tenant, the default tenant when omitted)
BEGIN;
SET LOCAL ROLE history_owner;

-- The signature gained p_tenant: no overload of the old one may remain.
DROP FUNCTION history.post_message(text, text, text, text, timestamptz, text[]);

-- post_message: record a message (its created event), its lineage and its
-- search projection. Re-posting the same id with identical conversation,
-- author, created text, time and sources is a no-op; anything else is HS004.
CREATE OR REPLACE FUNCTION history.post_message(
    p_message_id      text,
    p_conversation_id text,
    p_author_id       text,
    p_body            text,
    p_sent_at         timestamptz,
    p_sources         text[] DEFAULT '{}',
    p_tenant          text DEFAULT 'default'
) RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, history, pg_temp
-- Results, errors and audit values never depend on the caller's session settings.
SET extra_float_digits = 1
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = postgres
SET TimeZone = 'UTC'
SET standard_conforming_strings = on
AS $function$
DECLARE
    v_tenant       integer := history._tenant_key(p_tenant);
    v_conversation bigint := history._conversation_key('p_conversation_id', p_conversation_id, v_tenant);
    v_author       bigint := history._account_key('p_author_id', p_author_id, v_tenant);
    v_source_ids   text[];
    v_source_keys  bigint[];
    v_source       bigint;
    v_message      bigint;
    v_event        bigint;
    v_existing     record;
BEGIN
    PERFORM history._require_id('p_message_id', p_message_id);
    PERFORM history._require_time('p_sent_at', p_sent_at);
    PERFORM history._require_body(p_body, p_message_id);
    IF p_sources IS NULL THEN
        RAISE EXCEPTION 'p_sources must be an array, got NULL' USING ERRCODE = 'HS001', HINT = 'Pass ''{}'' for no sources.';
    END IF;

    SELECT array_agg(DISTINCT s COLLATE "C" ORDER BY s COLLATE "C") INTO v_source_ids FROM unnest(p_sources) s;
    v_source_ids := coalesce(v_source_ids, '{}');
    IF p_message_id = ANY (v_source_ids) THEN
        RAISE EXCEPTION 'message % cannot be its own source', quote_literal(p_message_id) USING ERRCODE = 'HS001';
    END IF;
    SELECT coalesce(array_agg(history._message_key('p_sources', s, v_tenant) ORDER BY s), '{}')
      INTO v_source_keys FROM unnest(v_source_ids) s;

    SELECT m.message_key, m.conversation_key, m.author_key, m.sent_at,
           (SELECT e.body FROM history.message_events e
             WHERE e.message_key = m.message_key AND e.tenant_key = v_tenant AND e.event_kind = 'created') AS created_body,
           (SELECT coalesce(array_agg(src.message_id ORDER BY src.message_id), '{}')
              FROM history.message_sources ms
              JOIN history.messages src ON src.message_key = ms.source_key AND src.tenant_key = v_tenant
             WHERE ms.message_key = m.message_key AND ms.tenant_key = v_tenant) AS source_ids
      INTO v_existing
      FROM history.messages m WHERE m.message_id = p_message_id AND m.tenant_key = v_tenant;
    IF FOUND THEN
        IF v_existing.conversation_key = v_conversation AND v_existing.author_key = v_author
           AND v_existing.sent_at = p_sent_at AND v_existing.created_body = p_body
           AND v_existing.source_ids = v_source_ids THEN
            RETURN;  -- idempotent re-post
        END IF;
        RAISE EXCEPTION 'message % was already posted with different content', quote_literal(p_message_id)
            USING ERRCODE = 'HS004',
                  DETAIL = 'Conversation, author, created text, sent_at and sources must all be identical to re-post.';
    END IF;

    INSERT INTO history.messages (tenant_key, message_id, conversation_key, author_key, sent_at, current_event_key)
    VALUES (v_tenant, p_message_id, v_conversation, v_author, p_sent_at, 0)
    ON CONFLICT (message_id, tenant_key) DO NOTHING
    RETURNING message_key INTO v_message;
    IF v_message IS NULL THEN
        RAISE EXCEPTION 'message % is being posted concurrently', quote_literal(p_message_id)
            USING ERRCODE = 'HS004', HINT = 'Retry: the repeat is idempotent if the content is the same.';
    END IF;
    INSERT INTO history.message_events (tenant_key, message_key, event_kind, body, occurred_at)
    VALUES (v_tenant, v_message, 'created', p_body, p_sent_at)
    RETURNING event_key INTO v_event;
    UPDATE history.messages SET current_event_key = v_event WHERE message_key = v_message AND tenant_key = v_tenant;

    IF cardinality(v_source_keys) > 0 THEN
        -- One row at a time: on Citus an INSERT ... SELECT of no distributed
        -- table goes through an intermediate result and a two-phase commit.
        FOREACH v_source IN ARRAY v_source_keys LOOP
            INSERT INTO history.message_sources (tenant_key, message_key, source_key)
            VALUES (v_tenant, v_message, v_source);
        END LOOP;
        -- Closure: the sources and everything they derive from. Two statements
        -- that insert each row's own tenant_key: Citus runs each on the
        -- tenant's shard (a UNION, or a constant, would go through the coordinator).
        INSERT INTO history.message_lineage (tenant_key, message_key, ancestor_key, ancestor_conversation_key, ancestor_sent_at)
        SELECT src.tenant_key, v_message, src.message_key, src.conversation_key, src.sent_at
          FROM history.messages src WHERE src.message_key = ANY (v_source_keys) AND src.tenant_key = v_tenant;
        INSERT INTO history.message_lineage (tenant_key, message_key, ancestor_key, ancestor_conversation_key, ancestor_sent_at)
        SELECT DISTINCT l.tenant_key, v_message, l.ancestor_key, l.ancestor_conversation_key, l.ancestor_sent_at
          FROM history.message_lineage l WHERE l.message_key = ANY (v_source_keys) AND l.tenant_key = v_tenant
        ON CONFLICT DO NOTHING;
    END IF;

    INSERT INTO history.conversation_authors (tenant_key, conversation_key, author_key)
    VALUES (v_tenant, v_conversation, v_author)
    ON CONFLICT DO NOTHING;

    PERFORM history._index_tenant_message(v_message, p_body, v_tenant);
END
$function$;

COMMENT ON FUNCTION history.post_message(text, text, text, text, timestamptz, text[], text) IS
    'Record a message with its lineage (p_sources); idempotent for an identical re-post, HS004 otherwise';
REVOKE ALL ON FUNCTION history.post_message(text, text, text, text, timestamptz, text[], text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.post_message(text, text, text, text, timestamptz, text[], text) TO history_runtime;

RESET ROLE;
COMMIT;
