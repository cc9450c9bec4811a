-- The distribution keys (docs/scale-out.md, "Tables"). Every table of the
-- schema is either one of the reference tables or carries tenant_key, not
-- null, in its primary key, in each unique constraint and unique index, and
-- on both sides of each foreign key to another such table: what Citus needs
-- to distribute them by tenant_key and co-locate them, with no schema change.
BEGIN;
SELECT plan(13);

CREATE TEMP TABLE reference_tables (relname name PRIMARY KEY);
INSERT INTO reference_tables VALUES ('write_locks'), ('search_settings'),
    ('query_digest_keys'), ('tenants'), ('reindex_progress'), ('run_tokens');
CREATE TEMP VIEW keyed_tables AS
SELECT c.oid, c.relname,
       (SELECT a.attnum FROM pg_attribute a
         WHERE a.attrelid = c.oid AND a.attname = 'tenant_key' AND a.attnotnull AND NOT a.attisdropped) AS tenant_attnum
  FROM pg_class c
 WHERE c.relnamespace = 'history'::regnamespace AND c.relkind IN ('r', 'p')
   AND c.relname NOT IN (SELECT relname FROM reference_tables);

-- A new table must be placed: keyed by tenant here, or a reference table above.
SELECT is((SELECT array_agg(relname::text ORDER BY relname) FROM keyed_tables),
          ARRAY['account_erasures', 'accounts', 'conversation_authors', 'conversation_search_events', 'conversations',
                'identity_proofs', 'memberships', 'message_events', 'message_lineage', 'message_search_documents',
                'message_sources', 'messages', 'run_evidence', 'run_trace', 'runs', 'search_reveals'],
          'the tables distributed by tenant are the accounts, the message side and the run side');

SELECT is_empty($$SELECT relname FROM keyed_tables WHERE tenant_attnum IS NULL$$,
                'each of them has tenant_key, not null');

SELECT is_empty($$SELECT i.indexrelid::regclass::text
                    FROM pg_index i JOIN keyed_tables t ON t.oid = i.indrelid
                   WHERE i.indisunique
                     AND NOT t.tenant_attnum = ANY ((i.indkey::int2[])[0:i.indnkeyatts - 1])$$,
                'each primary key, unique constraint and unique index includes tenant_key among its keys');

SELECT is_empty($$SELECT k.conname::text
                    FROM pg_constraint k
                    JOIN keyed_tables child ON child.oid = k.conrelid
                    JOIN keyed_tables parent ON parent.oid = k.confrelid
                   WHERE k.contype = 'f'
                     AND (k.confkey[pg_catalog.array_position(k.conkey, child.tenant_attnum)]
                          IS DISTINCT FROM parent.tenant_attnum)$$,
                'each foreign key between them matches tenant_key to tenant_key');

-- The checks above hold for the keys that exist; these are the keys that
-- must exist (a dropped one, say message_sources' key to its source, would
-- let a message name a source in another tenant). A new key is added here.
SELECT set_eq($$SELECT k.conrelid::regclass::text || ' (' || array_to_string(ARRAY(
                           SELECT a.attname FROM unnest(k.conkey) WITH ORDINALITY c(n, o)
                             JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = c.n ORDER BY c.o), ', ')
                       || ') -> ' || k.confrelid::regclass::text || ' (' || array_to_string(ARRAY(
                           SELECT a.attname FROM unnest(k.confkey) WITH ORDINALITY c(n, o)
                             JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = c.n ORDER BY c.o), ', ') || ')'
                  FROM pg_constraint k
                 WHERE k.contype = 'f' AND k.connamespace = 'history'::regnamespace$$,
              ARRAY['history.conversations (tenant_key) -> history.tenants (tenant_key)',
                    'history.run_tokens (tenant_key) -> history.tenants (tenant_key)',
                    'history.accounts (tenant_key) -> history.tenants (tenant_key)',
                    'history.memberships (account_key, tenant_key) -> history.accounts (account_key, tenant_key)',
                    'history.memberships (conversation_key, tenant_key) -> history.conversations (conversation_key, tenant_key)',
                    'history.messages (author_key, tenant_key) -> history.accounts (account_key, tenant_key)',
                    'history.messages (conversation_key, tenant_key) -> history.conversations (conversation_key, tenant_key)',
                    'history.messages (current_event_key, tenant_key) -> history.message_events (event_key, tenant_key)',
                    'history.message_events (message_key, tenant_key) -> history.messages (message_key, tenant_key)',
                    'history.message_sources (message_key, tenant_key) -> history.messages (message_key, tenant_key)',
                    'history.message_sources (source_key, tenant_key) -> history.messages (message_key, tenant_key)',
                    'history.message_lineage (message_key, tenant_key) -> history.messages (message_key, tenant_key)',
                    'history.message_lineage (ancestor_key, tenant_key) -> history.messages (message_key, tenant_key)',
                    'history.message_search_documents (message_key, tenant_key) -> history.messages (message_key, tenant_key)',
                    'history.conversation_authors (author_key, tenant_key) -> history.accounts (account_key, tenant_key)',
                    'history.conversation_authors (conversation_key, tenant_key) -> history.conversations (conversation_key, tenant_key)',
                    'history.identity_proofs (account_a_key, tenant_key) -> history.accounts (account_key, tenant_key)',
                    'history.identity_proofs (account_b_key, tenant_key) -> history.accounts (account_key, tenant_key)',
                    'history.account_erasures (account_key, tenant_key) -> history.accounts (account_key, tenant_key)',
                    'history.runs (agent_key, tenant_key) -> history.accounts (account_key, tenant_key)',
                    'history.runs (requester_key, tenant_key) -> history.accounts (account_key, tenant_key)',
                    'history.runs (conversation_key, tenant_key) -> history.conversations (conversation_key, tenant_key)',
                    'history.runs (current_message_key, tenant_key) -> history.messages (message_key, tenant_key)',
                    'history.conversation_search_events (agent_key, tenant_key) -> history.accounts (account_key, tenant_key)',
                    'history.conversation_search_events (digest_key_id) -> history.query_digest_keys (digest_key_id)',
                    'history.conversation_search_events (run_key, tenant_key) -> history.runs (run_key, tenant_key)',
                    'history.run_evidence (run_key, tenant_key) -> history.runs (run_key, tenant_key)',
                    'history.run_evidence (event_key, tenant_key) -> history.conversation_search_events (event_key, tenant_key)',
                    'history.run_evidence (message_key, tenant_key) -> history.messages (message_key, tenant_key)',
                    'history.run_trace (run_key, tenant_key) -> history.runs (run_key, tenant_key)',
                    'history.run_trace (event_key, tenant_key) -> history.conversation_search_events (event_key, tenant_key)'],
              'the foreign keys of the schema are exactly the expected ones (each keyed table''s to its parents by tenant_key too)');

SELECT is_empty($$SELECT k.conname::text
                    FROM pg_constraint k
                    JOIN pg_class child ON child.oid = k.conrelid
                    JOIN keyed_tables parent ON parent.oid = k.confrelid
                   WHERE k.contype = 'f' AND child.relname IN (SELECT relname FROM reference_tables)$$,
                'no reference table has a foreign key to a distributed one (Citus refuses it)');

SELECT throws_ok($$INSERT INTO history.tenants (tenant_id) VALUES ('no spaces')$$, '23514', NULL,
                 'a tenant id has the documented form (the table refuses another)');

-- With a second tenant: rows follow their conversation's tenant, and ids are
-- unique within a tenant.
SELECT history.upsert_account('dk-p', 'person');
SELECT history.upsert_conversation('dk-c', 'group');
SELECT history.post_message('dk-m', 'dk-c', 'dk-p', 'first tenant', '2026-03-01');
INSERT INTO history.tenants VALUES (2, 'second');

SELECT throws_ok($$INSERT INTO history.messages (tenant_key, message_id, conversation_key, author_key, sent_at, current_event_key)
                   SELECT 2, 'dk-m2', conversation_key, (SELECT account_key FROM history.accounts WHERE account_id = 'dk-p'),
                          '2026-03-02', 0
                     FROM history.conversations WHERE conversation_id = 'dk-c'$$,
                 '23503', NULL, 'a message is refused in a tenant other than its conversation''s');

SELECT throws_ok($$INSERT INTO history.message_search_documents
                          (message_key, tenant_key, message_id, conversation_key, author_key, sent_at, has_lineage, document)
                   SELECT message_key, 2, message_id, conversation_key, author_key, sent_at, false, ''
                     FROM history.messages WHERE message_id = 'dk-m'$$,
                 '23503', NULL, 'a projection row is refused in a tenant other than its message''s');

INSERT INTO history.conversations (tenant_key, conversation_id, kind, language) VALUES (2, 'dk-c2', 'group', 'simple');
INSERT INTO history.accounts (tenant_key, account_id, kind, component_key) VALUES (2, 'dk-p', 'person', 0);
INSERT INTO history.messages (tenant_key, message_id, conversation_key, author_key, sent_at, current_event_key)
SELECT 2, 'dk-m2', conversation_key, (SELECT account_key FROM history.accounts WHERE account_id = 'dk-p' AND tenant_key = 2), '2026-03-02', 0
  FROM history.conversations WHERE conversation_id = 'dk-c2';
SELECT throws_ok($$INSERT INTO history.message_sources (tenant_key, message_key, source_key)
                   SELECT 2, m.message_key, s.message_key
                     FROM history.messages m, history.messages s WHERE m.message_id = 'dk-m2' AND s.message_id = 'dk-m'$$,
                 '23503', NULL, 'a message''s source in another tenant is refused (no cross-tenant lineage)');
SELECT throws_ok($$INSERT INTO history.message_lineage (tenant_key, message_key, ancestor_key, ancestor_conversation_key, ancestor_sent_at)
                   SELECT 2, m.message_key, s.message_key, s.conversation_key, s.sent_at
                     FROM history.messages m, history.messages s WHERE m.message_id = 'dk-m2' AND s.message_id = 'dk-m'$$,
                 '23503', NULL, 'and so is an ancestor in another tenant');

SELECT throws_ok($$INSERT INTO history.identity_proofs (tenant_key, proof_id, account_a_key, account_b_key, verified_at)
                   SELECT 1, 'dk-proof', a.account_key, b.account_key, '2026-03-03'
                     FROM history.accounts a, history.accounts b
                    WHERE a.account_id = 'dk-p' AND a.tenant_key = 1 AND b.account_id = 'dk-p' AND b.tenant_key = 2$$,
                 '23503', NULL, 'a proof joining accounts of two tenants is refused');

SELECT lives_ok($$INSERT INTO history.conversations (tenant_key, conversation_id, kind, language)
                  VALUES (2, 'dk-c', 'group', 'simple')$$,
                'a conversation id of one tenant may be used in another');

SELECT * FROM finish();
ROLLBACK;
