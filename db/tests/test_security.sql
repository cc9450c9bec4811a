-- Roles, ownership and privileges of schema history (SPEC §7).
-- Catalog-wide checks loop over every function and relation of the schema,
-- so a function or table added later is covered without editing this file.
BEGIN;
SELECT plan(172);

-- The public SQL surface and who may execute each function.
CREATE TEMP TABLE surface (name name, args name[], runtime boolean, searcher boolean, auditor boolean,
                           verifier boolean) ON COMMIT DROP;
INSERT INTO surface VALUES
    ('upsert_account', ARRAY['text', 'text', 'text', 'text'],
        true, false, false, false),
    ('upsert_conversation', ARRAY['text', 'text', 'text', 'regconfig', 'text'],
        true, false, false, false),
    ('add_member', ARRAY['text', 'text', 'timestamp with time zone', 'text'],
        true, false, false, false),
    ('remove_member', ARRAY['text', 'text', 'timestamp with time zone', 'text'],
        true, false, false, false),
    ('post_message', ARRAY['text', 'text', 'text', 'text', 'timestamp with time zone', 'text[]', 'text'],
        true, false, false, false),
    ('edit_message', ARRAY['text', 'text', 'timestamp with time zone', 'text'],
        true, false, false, false),
    ('delete_message', ARRAY['text', 'timestamp with time zone', 'text'],
        true, false, false, false),
    ('erase_account', ARRAY['text', 'timestamp with time zone', 'text'],
        true, false, false, false),
    ('link_identity', ARRAY['text', 'text', 'text', 'timestamp with time zone', 'text'],
        true, false, false, false),
    ('revoke_proof', ARRAY['text', 'timestamp with time zone', 'text'],
        true, false, false, false),
    ('begin_run', ARRAY['text', 'text', 'text', 'text', 'text[]', 'text[]', 'text'],
        true, false, false, false),
    ('end_run', ARRAY['uuid'],
        true, false, false, false),
    ('check_delivery', ARRAY['uuid'],
        true, false, false, false),
    ('record_reply', ARRAY['uuid', 'text', 'text', 'timestamp with time zone'],
        true, false, false, false),
    ('_search_history', ARRAY['uuid', 'text', 'text', 'timestamp with time zone', 'timestamp with time zone', 'integer'],
        true, true, false, false),
    ('_search_reveal', ARRAY['uuid', 'uuid', 'text', 'boolean'],
        true, true, false, false),
    ('verify_query_digest', ARRAY['uuid', 'text'],
        false, false, false, true),
    ('run_status', ARRAY['uuid'],
        true, true, false, false),
    -- The auditor's views read through these on Citus (the owner's connections reach the shards).
    ('_search_audit_rows', ARRAY[]::name[],
        false, false, true, false),
    ('_search_audit_messages_rows', ARRAY[]::name[],
        false, false, true, false),
    ('_status_rows', ARRAY[]::name[],
        false, false, true, false);

CREATE TEMP TABLE client_roles (role name) ON COMMIT DROP;
INSERT INTO client_roles VALUES ('history_runtime'), ('history_searcher'), ('history_auditor'),
                                ('history_digest_verifier');

-- Every function of the schema, with whether it belongs to an extension.
CREATE TEMP VIEW schema_functions AS
SELECT p.oid, p.proname, p.oid::regprocedure::text AS signature, p.prosecdef, p.proconfig, p.proowner,
       EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                WHERE d.classid = 'pg_catalog.pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e') AS in_extension
  FROM pg_catalog.pg_proc p
 WHERE p.pronamespace = 'history'::regnamespace;

-- Every relation of the schema (tables, views, sequences, composite types...), indexes aside.
CREATE TEMP VIEW schema_relations AS
SELECT c.oid, c.relname, c.relkind, c.relowner
  FROM pg_catalog.pg_class c
 WHERE c.relnamespace = 'history'::regnamespace AND c.relkind NOT IN ('i', 'I');

-- ---------------------------------------------------------------- roles
SELECT is((SELECT count(*)::int FROM pg_catalog.pg_roles
            WHERE rolname IN ('history_owner', 'history_runtime', 'history_searcher', 'history_auditor',
                              'history_digest_verifier')),
          5, 'the owner and the four client roles exist');
SELECT is((SELECT coalesce(array_agg(rolname::text ORDER BY rolname), '{}') FROM pg_catalog.pg_roles
            WHERE rolname IN ('history_owner', 'history_runtime', 'history_searcher', 'history_auditor',
                              'history_digest_verifier')
              AND rolcanlogin),
          '{}'::text[], 'all five roles are NOLOGIN');
SELECT is((SELECT coalesce(array_agg(rolname::text ORDER BY rolname), '{}') FROM pg_catalog.pg_roles
            WHERE rolname IN ('history_owner', 'history_runtime', 'history_searcher', 'history_auditor',
                              'history_digest_verifier')
              AND (rolsuper OR rolcreaterole OR rolcreatedb OR rolbypassrls OR rolreplication)),
          '{}'::text[], 'none of the roles is superuser or has CREATEROLE, CREATEDB, BYPASSRLS or REPLICATION');
SELECT is((SELECT coalesce(array_agg(r.rolname::text ORDER BY r.rolname), '{}')
             FROM pg_catalog.pg_auth_members am
             JOIN pg_catalog.pg_roles r ON r.oid = am.member
             JOIN pg_catalog.pg_roles g ON g.oid = am.roleid
            WHERE g.rolname = 'history_owner'),
          '{}'::text[], 'no role is a member of history_owner');

-- ---------------------------------------------------------------- ownership
SELECT schema_owner_is('history', 'history_owner', 'history_owner owns schema history');
SELECT is((SELECT coalesce(array_agg(relname::text ORDER BY relname), '{}') FROM schema_relations
            WHERE relowner <> 'history_owner'::regrole),
          '{}'::text[], 'history_owner owns every table, view, sequence and type of schema history');
SELECT is((SELECT coalesce(array_agg(signature ORDER BY signature), '{}') FROM schema_functions
            WHERE NOT in_extension AND proowner <> 'history_owner'::regrole),
          '{}'::text[], 'history_owner owns every function of schema history (extension members aside)');
SELECT is((SELECT count(*)::int FROM schema_relations WHERE relkind = 'r'), 
          (SELECT count(*)::int FROM pg_catalog.pg_tables WHERE schemaname = 'history' AND tableowner = 'history_owner'),
          'pg_tables agrees: every history table is owned by history_owner');

-- ---------------------------------------------------------------- functions, catalog-wide
SELECT is((SELECT coalesce(array_agg(signature ORDER BY signature), '{}') FROM schema_functions
            WHERE prosecdef
              AND NOT coalesce('search_path=pg_catalog, history, pg_temp' = ANY (proconfig), false)),
          '{}'::text[], 'every SECURITY DEFINER function pins search_path = pg_catalog, history, pg_temp');
SELECT is((SELECT coalesce(array_agg(signature ORDER BY signature), '{}') FROM schema_functions
            WHERE prosecdef
              AND NOT coalesce(proconfig @> ARRAY['extra_float_digits=1', 'DateStyle=ISO, MDY', 'IntervalStyle=postgres',
                                                  'TimeZone=UTC', 'standard_conforming_strings=on'], false)),
          '{}'::text[],
          'every SECURITY DEFINER function pins extra_float_digits, DateStyle, IntervalStyle, TimeZone and standard_conforming_strings');
SELECT is((SELECT coalesce(array_agg(signature ORDER BY signature), '{}') FROM schema_functions
            WHERE pg_catalog.has_function_privilege('public', oid, 'EXECUTE')),
          '{}'::text[], 'no function of schema history is executable by PUBLIC');
SELECT is((SELECT coalesce(array_agg(proname::text ORDER BY proname), '{}') FROM schema_functions WHERE prosecdef),
          (SELECT array_agg(name::text ORDER BY name) FROM surface),
          'the SECURITY DEFINER functions are exactly the public surface (helpers run as their caller)');
SELECT is((SELECT coalesce(array_agg(proname::text ORDER BY proname), '{}') FROM schema_functions
            WHERE pg_catalog.has_function_privilege('history_runtime', oid, 'EXECUTE')),
          (SELECT array_agg(n ORDER BY n) FROM (SELECT name::text FROM surface WHERE runtime
                                                UNION ALL SELECT 'search_history') x(n)),
          'history_runtime may execute exactly the runtime functions and search_history (procedure and function)');
SELECT is((SELECT coalesce(array_agg(proname::text ORDER BY proname), '{}') FROM schema_functions
            WHERE pg_catalog.has_function_privilege('history_searcher', oid, 'EXECUTE')),
          ARRAY['_search_history', '_search_reveal', 'run_status', 'search_history'],
          'history_searcher may execute search_history (procedure, search and reveal) and run_status, nothing else');
SELECT is((SELECT coalesce(array_agg(proname::text ORDER BY proname), '{}') FROM schema_functions
            WHERE pg_catalog.has_function_privilege('history_auditor', oid, 'EXECUTE')),
          ARRAY['_search_audit_messages_rows', '_search_audit_rows', '_status_rows', 'schema_release'],
          'history_auditor may execute the functions of its three views (what they read on Citus) and schema_release (history.status shows it), no other');
SELECT is((SELECT coalesce(array_agg(proname::text ORDER BY proname), '{}') FROM schema_functions
            WHERE pg_catalog.has_function_privilege('history_digest_verifier', oid, 'EXECUTE')),
          ARRAY['verify_query_digest'],
          'history_digest_verifier may execute verify_query_digest and nothing else');
SELECT is((SELECT coalesce(array_agg(r.rolname::text ORDER BY r.rolname), '{}')
             FROM pg_catalog.pg_auth_members am
             JOIN pg_catalog.pg_roles r ON r.oid = am.member
            WHERE am.roleid = 'history_digest_verifier'::regrole),
          '{}'::text[], 'no role is a member of history_digest_verifier by default (it is granted to people explicitly)');

SELECT is((SELECT coalesce(array_agg(signature ORDER BY signature), '{}') FROM schema_functions
            WHERE NOT in_extension AND pg_catalog.pg_get_functiondef(oid) ~* 'advisory'),
          '{}'::text[], 'no function of schema history takes an advisory lock (any login could take the same key)');

-- ---------------------------------------------------------------- functions, one by one (21 + 84)
SELECT is_definer('history', s.name, s.args, pg_catalog.format('history.%s is SECURITY DEFINER', s.name))
  FROM surface s ORDER BY s.name;
SELECT function_privs_are('history', s.name, s.args, r.role,
                          CASE WHEN (r.role = 'history_runtime' AND s.runtime)
                                 OR (r.role = 'history_searcher' AND s.searcher)
                                 OR (r.role = 'history_auditor' AND s.auditor)
                                 OR (r.role = 'history_digest_verifier' AND s.verifier)
                               THEN ARRAY['EXECUTE'] ELSE '{}'::text[] END,
                          pg_catalog.format('%s: privileges on history.%s', r.role, s.name))
  FROM surface s CROSS JOIN client_roles r ORDER BY r.role, s.name;

-- The committing procedure in front of _search_history (audit before reveal):
-- PostgreSQL lets a procedure COMMIT only when it runs as its caller with no SET clause.
SELECT is((SELECT p.prokind::text FROM pg_catalog.pg_proc p
            WHERE p.oid = 'history.search_history(uuid, text, text, timestamptz, timestamptz, integer, history.search_result)'::regprocedure),
          'p', 'history.search_history is a procedure');
SELECT ok((SELECT NOT p.prosecdef AND p.proconfig IS NULL FROM pg_catalog.pg_proc p
            WHERE p.oid = 'history.search_history(uuid, text, text, timestamptz, timestamptz, integer, history.search_result)'::regprocedure),
          'history.search_history runs as its caller with no SET clause (so it may COMMIT)');
SELECT function_privs_are('history', 'search_history',
                          ARRAY['uuid', 'text', 'text', 'timestamp with time zone', 'timestamp with time zone', 'integer',
                                'history.search_result'],
                          r.role, CASE WHEN r.role IN ('history_runtime', 'history_searcher') THEN ARRAY['EXECUTE']
                                       ELSE '{}'::text[] END,
                          pg_catalog.format('%s: privileges on the procedure history.search_history', r.role))
  FROM client_roles r ORDER BY r.role;

-- ---------------------------------------------------------------- tables and views
SELECT is((SELECT coalesce(array_agg(c.relname::text ORDER BY c.relname), '{}')
             FROM schema_relations c
            WHERE (c.relkind = 'S' AND pg_catalog.has_sequence_privilege('history_runtime', c.oid, 'USAGE, SELECT, UPDATE'))
               OR (c.relkind IN ('r', 'v', 'm', 'f', 'p')
                   AND (pg_catalog.has_table_privilege('history_runtime', c.oid,
                            'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
                        OR pg_catalog.has_any_column_privilege('history_runtime', c.oid, 'SELECT, INSERT, UPDATE, REFERENCES')))),
          '{}'::text[], 'history_runtime has no privilege on any table, view or sequence of schema history');
SELECT is((SELECT coalesce(array_agg(c.relname::text ORDER BY c.relname), '{}')
             FROM schema_relations c
            WHERE (c.relkind = 'S' AND pg_catalog.has_sequence_privilege('history_searcher', c.oid, 'USAGE, SELECT, UPDATE'))
               OR (c.relkind IN ('r', 'v', 'm', 'f', 'p')
                   AND (pg_catalog.has_table_privilege('history_searcher', c.oid,
                            'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
                        OR pg_catalog.has_any_column_privilege('history_searcher', c.oid, 'SELECT, INSERT, UPDATE, REFERENCES')))),
          '{}'::text[], 'history_searcher has no privilege on any table, view or sequence of schema history');
SELECT is((SELECT coalesce(array_agg(c.relname::text ORDER BY c.relname), '{}')
             FROM schema_relations c
            WHERE (c.relkind = 'S' AND pg_catalog.has_sequence_privilege('history_auditor', c.oid, 'USAGE, SELECT, UPDATE'))
               OR (c.relkind IN ('r', 'v', 'm', 'f', 'p')
                   AND (pg_catalog.has_table_privilege('history_auditor', c.oid,
                            'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
                        OR pg_catalog.has_any_column_privilege('history_auditor', c.oid, 'SELECT, INSERT, UPDATE, REFERENCES')))),
          ARRAY['search_audit', 'search_audit_messages', 'status'],
          'history_auditor has privileges on the two audit views and the status view, and nothing else');
SELECT is((SELECT coalesce(array_agg(c.relname::text ORDER BY c.relname), '{}')
             FROM schema_relations c
            WHERE c.relkind = 'r'
              AND (pg_catalog.has_table_privilege('history_auditor', c.oid, 'SELECT')
                   OR pg_catalog.has_any_column_privilege('history_auditor', c.oid, 'SELECT'))),
          '{}'::text[], 'history_auditor cannot read any table (only the views)');
SELECT is((SELECT coalesce(array_agg(c.relname::text ORDER BY c.relname), '{}')
             FROM schema_relations c
            WHERE (c.relkind = 'S' AND pg_catalog.has_sequence_privilege('history_digest_verifier', c.oid, 'USAGE, SELECT, UPDATE'))
               OR (c.relkind IN ('r', 'v', 'm', 'f', 'p')
                   AND (pg_catalog.has_table_privilege('history_digest_verifier', c.oid,
                            'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
                        OR pg_catalog.has_any_column_privilege('history_digest_verifier', c.oid, 'SELECT, INSERT, UPDATE, REFERENCES')))),
          '{}'::text[], 'history_digest_verifier has no privilege on any table, view or sequence of schema history');
-- A run token is a live bearer capability: the audit views show a run's key and the token's SHA-256, never the token.
SELECT is((SELECT coalesce(array_agg(c.relname || '.' || a.attname ORDER BY c.relname, a.attname), '{}')
             FROM pg_catalog.pg_attribute a JOIN schema_relations c ON c.oid = a.attrelid
            WHERE c.relname IN ('search_audit', 'search_audit_messages') AND a.attnum > 0 AND NOT a.attisdropped
              AND (a.atttypid = 'uuid'::regtype OR a.attname ~ 'run_id|token')),
          ARRAY['search_audit.run_token_sha256', 'search_audit.search_event_id',
                'search_audit_messages.run_token_sha256', 'search_audit_messages.search_event_id'],
          'the audit views have no run token column (run_key and run_token_sha256 instead)');
SELECT table_privs_are('history', 'search_audit', 'history_auditor', ARRAY['SELECT'],
                       'history_auditor may only SELECT history.search_audit');
SELECT table_privs_are('history', 'search_audit_messages', 'history_auditor', ARRAY['SELECT'],
                       'history_auditor may only SELECT history.search_audit_messages');
SELECT is((SELECT coalesce(array_agg(c.relname::text ORDER BY c.relname), '{}')
             FROM schema_relations c
            WHERE c.relkind IN ('r', 'v', 'm', 'p')
              AND pg_catalog.has_table_privilege('public', c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')),
          '{}'::text[], 'PUBLIC has no privilege on any relation of schema history');

-- The digest key table: unreadable to every client role, in the catalog and in practice.
SELECT ok(NOT pg_catalog.has_table_privilege(r.role, 'history.query_digest_keys', 'SELECT')
          AND NOT pg_catalog.has_any_column_privilege(r.role, 'history.query_digest_keys', 'SELECT'),
          pg_catalog.format('%s cannot read history.query_digest_keys (catalog)', r.role))
  FROM client_roles r ORDER BY r.role;

SET LOCAL ROLE history_runtime;
SELECT throws_ok('SELECT secret FROM history.query_digest_keys', '42501', NULL,
                 'history_runtime: reading history.query_digest_keys is refused');
SELECT throws_ok('SELECT count(*) FROM history.messages', '42501', NULL,
                 'history_runtime: reading history.messages is refused');
SELECT throws_ok($$INSERT INTO history.accounts (account_id, kind, component_key) VALUES ('sec-x', 'person', 0)$$, '42501', NULL,
                 'history_runtime: writing history.accounts directly is refused');
SELECT throws_ok($$SELECT history.verify_query_digest(gen_random_uuid(), 'q')$$, '42501', NULL,
                 'history_runtime: verify_query_digest is refused');
SELECT throws_ok($$SELECT history._account_key('p', 'x', 1)$$, '42501', NULL,
                 'history_runtime: an internal helper is refused');
SELECT lives_ok($$SELECT history.upsert_account('sec-runtime-probe', 'person')$$,
                'history_runtime: upsert_account is allowed');
RESET ROLE;

SET LOCAL ROLE history_searcher;
SELECT throws_ok('SELECT secret FROM history.query_digest_keys', '42501', NULL,
                 'history_searcher: reading history.query_digest_keys is refused');
SELECT throws_ok('SELECT count(*) FROM history.message_search_documents', '42501', NULL,
                 'history_searcher: reading the search projection is refused');
SELECT throws_ok('SELECT count(*) FROM history.search_audit', '42501', NULL,
                 'history_searcher: reading the audit view is refused');
SELECT throws_ok($$SELECT history.upsert_account('sec-y', 'person')$$, '42501', NULL,
                 'history_searcher: upsert_account is refused');
SELECT throws_ok($$SELECT history.begin_run('a', 'c', 'r', 'm')$$, '42501', NULL,
                 'history_searcher: begin_run is refused');
SELECT throws_ok($$SELECT history._search_history(gen_random_uuid(), 'anything')$$, 'HS002', NULL,
                 'history_searcher: _search_history is executable (an unknown run gets HS002, not 42501)');
SELECT throws_ok($$SELECT history._search_reveal(gen_random_uuid(), gen_random_uuid(), 'anything')$$, 'HS001', NULL,
                 'history_searcher: _search_reveal is executable (an unknown search gets HS001, not 42501)');
RESET ROLE;

SET LOCAL ROLE history_auditor;
SELECT throws_ok('SELECT secret FROM history.query_digest_keys', '42501', NULL,
                 'history_auditor: reading history.query_digest_keys is refused');
SELECT throws_ok('SELECT count(*) FROM history.message_events', '42501', NULL,
                 'history_auditor: reading message text (history.message_events) is refused');
SELECT throws_ok('SELECT count(*) FROM history.conversation_search_events', '42501', NULL,
                 'history_auditor: reading the audit table directly is refused');
SELECT lives_ok('SELECT count(*) FROM history.search_audit', 'history_auditor: history.search_audit is readable');
SELECT lives_ok('SELECT count(*) FROM history.search_audit_messages', 'history_auditor: history.search_audit_messages is readable');
SELECT lives_ok('SELECT count(*) FROM history._search_audit_rows()', 'history_auditor: history._search_audit_rows() is executable');
SELECT throws_ok('SELECT count(*) FROM history.messages', '42501', NULL,
                 'history_auditor: reading message text (history.messages) is refused');
SELECT throws_ok($$SELECT history._search_history(gen_random_uuid(), 'anything')$$, '42501', NULL,
                 'history_auditor: _search_history is refused');
SELECT throws_ok($$SELECT history.verify_query_digest(gen_random_uuid(), 'q')$$, '42501', NULL,
                 'history_auditor: verify_query_digest is refused (history_digest_verifier only)');
RESET ROLE;

SET LOCAL ROLE history_digest_verifier;

SELECT throws_ok($$SELECT history.verify_query_digest(gen_random_uuid(), 'q')$$, 'HS003', NULL,
                 'history_digest_verifier: verify_query_digest is executable (an unknown event gets HS003)');
SELECT throws_ok('SELECT count(*) FROM history.search_audit', '42501', NULL,
                 'history_digest_verifier: the audit views are refused');
SELECT throws_ok('SELECT secret FROM history.query_digest_keys', '42501', NULL,
                 'history_digest_verifier: reading history.query_digest_keys is refused');
RESET ROLE;

-- ---------------------------------------------------------------- the schema itself
SELECT ok(pg_catalog.has_schema_privilege(r.role, 'history', 'USAGE')
          AND NOT pg_catalog.has_schema_privilege(r.role, 'history', 'CREATE'),
          pg_catalog.format('%s has USAGE but not CREATE on schema history', r.role))
  FROM client_roles r ORDER BY r.role;
SELECT ok(NOT pg_catalog.has_schema_privilege('public', 'history', 'CREATE'),
          'PUBLIC cannot create objects in schema history');

SELECT * FROM finish();
ROLLBACK;
