-- Deploy history-search:_post_message_in_tenant to pg
-- The function lives in db/functions/_post_message_in_tenant.sql.
BEGIN;
SET LOCAL ROLE history_owner;

-- _post_message_in_tenant: history.post_message's work in the tenant
-- p_tenant (its key): record a message (its created event), its lineage and
-- its search projection. Re-posting the same id with identical conversation,
-- author, created text, time and sources is a no-op; anything else is HS004.
--
-- On Citus `history-search distribute` delegates it by p_tenant, like the
-- search (history._search_in_tenant): the coordinator sends the tenant's
-- worker one call and every statement below runs there, on the tenant's
-- shards. Executable by the owner alone (history.post_message calls it).
CREATE OR REPLACE FUNCTION history._post_message_in_tenant(
    p_tenant          integer,
    p_message_id      text,
    p_conversation_id text,
    p_author_id       text,
    p_body            text,
    p_sent_at         timestamptz,
    p_sources         text[]
) RETURNS void
LANGUAGE plpgsql
SECURITY INVOKER  -- the owner alone may call it: its caller is a definer
SET search_path = pg_catalog, history, pg_temp
-- Results, errors and audit values never depend on the caller's session settings.
SET extra_float_digits = 1
SET DateStyle = 'ISO, MDY'
SET IntervalStyle = postgres
SET TimeZone = 'UTC'
SET standard_conforming_strings = on
AS $function$
DECLARE
    v_tenant          integer := p_tenant;
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
    v_shards          regclass[];
    v_ancestors       bigint[];
    v_ancestor_conversations bigint[];
    v_ancestor_times  timestamptz[];
BEGIN
    PERFORM history._require_id('p_conversation_id', p_conversation_id);
    SELECT array_agg(DISTINCT s COLLATE "C" ORDER BY s COLLATE "C") INTO v_source_ids FROM unnest(p_sources) s;
    v_source_ids := coalesce(v_source_ids, '{}');

    -- Everything the checks and the writes need, in one statement naming the
    -- tenant: on Citus each statement is a round trip to the tenant's worker,
    -- and this call's cost was its number of statements. Inside a call
    -- delegated to that worker, the same statement reads the tenant's shards
    -- (history._local_shards): Citus' planning of it as a distributed query
    -- cost four times what the rest of this call costs. The writes below stay
    -- on the distributed tables, where Citus takes its locks for them.
    v_shards := history._local_shards(
        '{history.messages, history.message_events, history.message_sources, history.conversations,
          history.accounts, history.conversation_authors}', v_tenant);
    IF v_shards IS NULL THEN
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
    ELSE
        EXECUTE pg_catalog.format($read$
        SELECT c.conversation_key, c.language, a.account_key, ca.author_key IS NOT NULL,
               (SELECT array_agg(s.message_id ORDER BY s.message_id) FROM %1$s s
                 WHERE s.message_id = ANY ($2) AND s.tenant_key = $1),
               (SELECT array_agg(s.message_key ORDER BY s.message_id) FROM %1$s s
                 WHERE s.message_id = ANY ($2) AND s.tenant_key = $1),
               m.message_key, m.conversation_key, m.author_key, m.sent_at,
               (SELECT e.body FROM %2$s e
                 WHERE e.message_key = m.message_key AND e.tenant_key = $1 AND e.event_kind = 'created'),
               (SELECT coalesce(array_agg(src.message_id ORDER BY src.message_id), '{}')
                  FROM %3$s ms
                  JOIN %1$s src ON src.message_key = ms.source_key AND src.tenant_key = $1
                 WHERE ms.message_key = m.message_key AND ms.tenant_key = $1)
          FROM (SELECT) one
          LEFT JOIN %4$s c ON c.conversation_id = $3 AND c.tenant_key = $1
          LEFT JOIN %5$s a ON a.account_id = $4 AND a.tenant_key = $1
          LEFT JOIN %6$s ca
                 ON ca.conversation_key = c.conversation_key AND ca.author_key = a.account_key AND ca.tenant_key = $1
          LEFT JOIN %1$s m ON m.message_id = $5 AND m.tenant_key = $1$read$,
            v_shards[1], v_shards[2], v_shards[3], v_shards[4], v_shards[5], v_shards[6])
          INTO v_conversation, v_language, v_author, v_authored, v_found_ids, v_found_keys,
               v_old_key, v_old_conversation, v_old_author, v_old_sent_at, v_old_body, v_old_sources
         USING v_tenant, v_source_ids, p_conversation_id, p_author_id, p_message_id;
    END IF;

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

    -- The projection's document before any write (history._indexed_document).
    v_document := history._indexed_document(p_body, v_language);

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
        -- Closure: the sources and everything they derive from, read in two
        -- statements that name the tenant and written a row at a time. Inside
        -- a call delegated to the tenant's worker Citus refuses an INSERT ...
        -- SELECT (it cannot tell that one names only the tenant), and a UNION
        -- would go through the coordinator.
        SELECT array_agg(src.message_key), array_agg(src.conversation_key), array_agg(src.sent_at)
          INTO v_ancestors, v_ancestor_conversations, v_ancestor_times
          FROM history.messages src WHERE src.message_key = ANY (v_source_keys) AND src.tenant_key = v_tenant;
        SELECT v_ancestors || coalesce(array_agg(l.ancestor_key), '{}'),
               v_ancestor_conversations || coalesce(array_agg(l.ancestor_conversation_key), '{}'),
               v_ancestor_times || coalesce(array_agg(l.ancestor_sent_at), '{}')
          INTO v_ancestors, v_ancestor_conversations, v_ancestor_times
          FROM (SELECT DISTINCT l.ancestor_key, l.ancestor_conversation_key, l.ancestor_sent_at
                  FROM history.message_lineage l
                 WHERE l.message_key = ANY (v_source_keys) AND l.tenant_key = v_tenant
                   AND NOT l.ancestor_key = ANY (v_source_keys)) l;
        FOR i IN 1 .. cardinality(v_ancestors) LOOP
            INSERT INTO history.message_lineage
                   (tenant_key, message_key, ancestor_key, ancestor_conversation_key, ancestor_sent_at)
            VALUES (v_tenant, v_message, v_ancestors[i], v_ancestor_conversations[i], v_ancestor_times[i])
            ON CONFLICT DO NOTHING;
        END LOOP;
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

COMMENT ON FUNCTION history._post_message_in_tenant(integer, text, text, text, text, timestamptz, text[]) IS
    'Internal: post_message in its tenant (delegated to the tenant''s worker on Citus), behind history.post_message';
REVOKE ALL ON FUNCTION history._post_message_in_tenant(integer, text, text, text, text, timestamptz, text[]) FROM PUBLIC;

RESET ROLE;
COMMIT;
