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
    v_tenant          integer := history._tenant_key(p_tenant);
    v_conversation    bigint;
    v_language        regconfig;
    v_author          bigint;
    v_authored        boolean;
    v_source_ids      text[];
    v_source_keys     bigint[];
    v_found_ids       text[];
    v_found_keys      bigint[];
    v_source          bigint;
    v_message         bigint;
    v_event           bigint;
    v_document        tsvector;
    v_old_key         bigint;
    v_old_conversation bigint;
    v_old_author      bigint;
    v_old_sent_at     timestamptz;
    v_old_body        text;
    v_old_sources     text[];
    v_id              text;
BEGIN
    PERFORM history._require_id('p_conversation_id', p_conversation_id);
    SELECT array_agg(DISTINCT s COLLATE "C" ORDER BY s COLLATE "C") INTO v_source_ids FROM unnest(p_sources) s;
    v_source_ids := coalesce(v_source_ids, '{}');

    -- Everything the checks and the writes need, in one statement naming the
    -- tenant: on Citus each statement is a round trip to the tenant's worker,
    -- and this call's cost was its number of statements.
    SELECT c.conversation_key, c.language, a.account_key, ca.author_key IS NOT NULL,
           (SELECT array_agg(s.message_id ORDER BY s.message_id) FROM history.messages s
             WHERE s.message_id = ANY (v_source_ids) AND s.tenant_key = v_tenant),
           (SELECT array_agg(s.message_key ORDER BY s.message_id) FROM history.messages s
             WHERE s.message_id = ANY (v_source_ids) AND s.tenant_key = v_tenant),
           m.message_key, m.conversation_key, m.author_key, m.sent_at,
           (SELECT e.body FROM history.message_events e
             WHERE e.message_key = m.message_key AND e.tenant_key = v_tenant AND e.event_kind = 'created'),
           (SELECT coalesce(array_agg(src.message_id ORDER BY src.message_id), '{}')
              FROM history.message_sources ms
              JOIN history.messages src ON src.message_key = ms.source_key AND src.tenant_key = v_tenant
             WHERE ms.message_key = m.message_key AND ms.tenant_key = v_tenant)
      INTO v_conversation, v_language, v_author, v_authored, v_found_ids, v_found_keys,
           v_old_key, v_old_conversation, v_old_author, v_old_sent_at, v_old_body, v_old_sources
      FROM (SELECT) one
      LEFT JOIN history.conversations c ON c.conversation_id = p_conversation_id AND c.tenant_key = v_tenant
      LEFT JOIN history.accounts a ON a.account_id = p_author_id AND a.tenant_key = v_tenant
      LEFT JOIN history.conversation_authors ca
             ON ca.conversation_key = c.conversation_key AND ca.author_key = a.account_key AND ca.tenant_key = v_tenant
      LEFT JOIN history.messages m ON m.message_id = p_message_id AND m.tenant_key = v_tenant;

    -- The checks in the order they always ran (the lookups raise their own errors).
    IF v_conversation IS NULL THEN
        PERFORM history._conversation_key('p_conversation_id', p_conversation_id, v_tenant);
    END IF;
    IF v_author IS NULL THEN
        PERFORM history._account_key('p_author_id', p_author_id, v_tenant);
    END IF;
    PERFORM history._require_id('p_message_id', p_message_id);
    PERFORM history._require_time('p_sent_at', p_sent_at);
    PERFORM history._require_body(p_body, p_message_id);
    IF p_sources IS NULL THEN
        RAISE EXCEPTION 'p_sources must be an array, got NULL' USING ERRCODE = 'HS001', HINT = 'Pass ''{}'' for no sources.';
    END IF;
    IF p_message_id = ANY (v_source_ids) THEN
        RAISE EXCEPTION 'message % cannot be its own source', quote_literal(p_message_id) USING ERRCODE = 'HS001';
    END IF;
    FOREACH v_id IN ARRAY v_source_ids LOOP
        IF NOT v_id = ANY (coalesce(v_found_ids, '{}')) THEN
            PERFORM history._message_key('p_sources', v_id, v_tenant);
        END IF;
    END LOOP;
    v_source_keys := coalesce(v_found_keys, '{}');

    IF v_old_key IS NOT NULL THEN
        IF v_old_conversation = v_conversation AND v_old_author = v_author
           AND v_old_sent_at = p_sent_at AND v_old_body = p_body AND v_old_sources = v_source_ids THEN
            RETURN;  -- idempotent re-post
        END IF;
        RAISE EXCEPTION 'message % was already posted with different content', quote_literal(p_message_id)
            USING ERRCODE = 'HS004',
                  DETAIL = 'Conversation, author, created text, sent_at and sources must all be identical to re-post.';
    END IF;

    -- The projection's document, as _index_tenant_message makes it, before any
    -- write: on Citus an exception block after a write is a savepoint on the worker.
    BEGIN
        v_document := history._document_vector(p_body, v_language);
    EXCEPTION WHEN program_limit_exceeded THEN
        RAISE EXCEPTION 'message body of % characters is too large to index', length(p_body)
            USING ERRCODE = 'HS001', HINT = 'Split the text into several messages.';
    END;

    -- Both keys first, so the message row names its created event (no UPDATE).
    v_message := nextval(pg_get_serial_sequence('history.messages', 'message_key'));
    v_event := nextval(pg_get_serial_sequence('history.message_events', 'event_key'));
    INSERT INTO history.messages (message_key, tenant_key, message_id, conversation_key, author_key, sent_at, current_event_key)
    OVERRIDING SYSTEM VALUE
    VALUES (v_message, v_tenant, p_message_id, v_conversation, v_author, p_sent_at, v_event)
    ON CONFLICT (message_id, tenant_key) DO NOTHING;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'message % is being posted concurrently', quote_literal(p_message_id)
            USING ERRCODE = 'HS004', HINT = 'Retry: the repeat is idempotent if the content is the same.';
    END IF;
    INSERT INTO history.message_events (event_key, tenant_key, message_key, event_kind, body, occurred_at)
    OVERRIDING SYSTEM VALUE
    VALUES (v_event, v_tenant, v_message, 'created', p_body, p_sent_at);

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

    IF NOT v_authored THEN
        INSERT INTO history.conversation_authors (tenant_key, conversation_key, author_key)
        VALUES (v_tenant, v_conversation, v_author)
        ON CONFLICT DO NOTHING;
    END IF;

    -- The projection row (what _index_tenant_message writes); a message with
    -- sources has lineage rows, one without has none.
    INSERT INTO history.message_search_documents
           (message_key, tenant_key, message_id, conversation_key, author_key, sent_at, has_lineage, document)
    VALUES (v_message, v_tenant, p_message_id, v_conversation, v_author, p_sent_at,
            cardinality(v_source_keys) > 0, v_document);
END
$function$;

COMMENT ON FUNCTION history.post_message(text, text, text, text, timestamptz, text[], text) IS
    'Record a message with its lineage (p_sources); idempotent for an identical re-post, HS004 otherwise';
REVOKE ALL ON FUNCTION history.post_message(text, text, text, text, timestamptz, text[], text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION history.post_message(text, text, text, text, timestamptz, text[], text) TO history_runtime;
