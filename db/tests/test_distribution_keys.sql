-- The distribution keys (docs/scale-out.md, "Tables"). Every table of the
-- schema is either one of the reference tables or carries tenant_key, not
-- null, in its primary key, in each unique constraint and unique index, and
-- on both sides of each foreign key to another such table: what Citus needs
-- to distribute them by tenant_key and co-locate them, with no schema change.
BEGIN;
SELECT plan(9);

CREATE TEMP TABLE reference_tables (relname name PRIMARY KEY);
INSERT INTO reference_tables VALUES ('accounts'), ('identity_proofs'), ('write_locks'), ('search_settings'),
    ('query_digest_keys'), ('tenants'), ('reindex_progress');
CREATE TEMP VIEW keyed_tables AS
SELECT c.oid, c.relname,
       (SELECT a.attnum FROM pg_attribute a
         WHERE a.attrelid = c.oid AND a.attname = 'tenant_key' AND a.attnotnull AND NOT a.attisdropped) AS tenant_attnum
  FROM pg_class c
 WHERE c.relnamespace = 'history'::regnamespace AND c.relkind IN ('r', 'p')
   AND c.relname NOT IN (SELECT relname FROM reference_tables);

-- A new table must be placed: keyed by tenant here, or a reference table above.
SELECT is((SELECT array_agg(relname::text ORDER BY relname) FROM keyed_tables),
          ARRAY['conversation_authors', 'conversation_search_events', 'conversations', 'memberships',
                'message_events', 'message_lineage', 'message_search_documents', 'message_sources',
                'messages', 'run_evidence', 'run_trace', 'runs', 'search_reveals'],
          'the tables distributed by tenant are the message side and the run side');

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

SELECT is_empty($$SELECT k.conname::text
                    FROM pg_constraint k
                    JOIN pg_class child ON child.oid = k.conrelid
                    JOIN keyed_tables parent ON parent.oid = k.confrelid
                   WHERE k.contype = 'f' AND child.relname IN (SELECT relname FROM reference_tables)$$,
                'no reference table has a foreign key to a distributed one (Citus refuses it)');

SELECT throws_ok($$INSERT INTO history.tenants VALUES (2, 'second')$$, '23514', NULL,
                 'one built-in tenant while the SQL surface names none, so text ids stay unique overall');

-- With a second tenant (the check dropped in this transaction): rows follow
-- their conversation's tenant, and ids are unique within a tenant.
SELECT history.upsert_account('dk-p', 'person');
SELECT history.upsert_conversation('dk-c', 'group');
SELECT history.post_message('dk-m', 'dk-c', 'dk-p', 'first tenant', '2026-03-01');
ALTER TABLE history.tenants DROP CONSTRAINT tenants_built_in_only;
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

SELECT lives_ok($$INSERT INTO history.conversations (tenant_key, conversation_id, kind, language)
                  VALUES (2, 'dk-c', 'group', 'simple')$$,
                'a conversation id of one tenant may be used in another');

SELECT * FROM finish();
ROLLBACK;
