-- Text analysis (SPEC §3 "Text analysis"; docs/text-analysis.md): the tokeniser,
-- _document_vector (its weight contract: A whole tokens, D identifier parts),
-- _query_terms, _query_languages, per-conversation languages and the
-- projection written by post_message/edit_message.
BEGIN;
SELECT plan(59);

CREATE FUNCTION pg_temp.lexemes(p tsvector) RETURNS text[] LANGUAGE sql IMMUTABLE AS
$$ SELECT coalesce(array_agg(u.lexeme ORDER BY u.lexeme), '{}') FROM unnest(p) u $$;
-- Lexemes that carry the given weight at some position.
CREATE FUNCTION pg_temp.weighted(p tsvector, w "char") RETURNS text[] LANGUAGE sql IMMUTABLE AS
$$ SELECT coalesce(array_agg(u.lexeme ORDER BY u.lexeme), '{}') FROM unnest(p) u WHERE w::text = ANY (u.weights) $$;
CREATE FUNCTION pg_temp.dv(p text, c regconfig DEFAULT 'english') RETURNS tsvector LANGUAGE sql IMMUTABLE AS
$$ SELECT history._document_vector(p, c) $$;
CREATE FUNCTION pg_temp.qt(p text, c regconfig[] DEFAULT '{english}', n integer DEFAULT 32) RETURNS text[] LANGUAGE sql IMMUTABLE AS
$$ SELECT history._query_terms(p, c, n) $$;

-- ============================================================ the tokeniser
SELECT is((SELECT array_agg(t.token || '/' || t.kind ORDER BY t.ordinal)
             FROM history._text_tokens('Ticket PROJ-4821 (see /etc/atlas/config.yaml). https://GitHub.com/acme/pull/12, 会議は明日 OK!') t),
          ARRAY['Ticket/word', 'proj-4821/identifier', 'see/word', 'etc/atlas/config.yaml/identifier',
                'github.com/acme/pull/12/identifier', '会議は明日/cjk', 'OK/word'],
          'tokens: words as written, identifiers normalised (lower case, no scheme, edges trimmed), CJK runs');
SELECT is((SELECT array_agg(t.token ORDER BY t.ordinal) FROM history._text_tokens('Atlasの設定 午後3時 “quoted” it''s') t),
          ARRAY['Atlas', 'の設定', '午後', '3', '時', 'quoted', 'it', 's'],
          'tokens: a script change, digits and quotes end a token');
SELECT is((SELECT count(*)::int FROM history._text_tokens('!&|():*<-> '' \\ ...')), 0, 'tokens: punctuation alone makes none');

-- ============================================================ documents: whole tokens (A)
SELECT is(pg_temp.dv('the meetings were moved'), setweight(to_tsvector('english', 'the meetings were moved'), 'A'),
          'words only: the language configuration''s own vector, weighted A');
SELECT is(pg_temp.weighted(pg_temp.dv('Ticket PROJ-4821 tracks it'), 'A'), ARRAY['proj-4821', 'ticket', 'track'],
          'an identifier is one whole token (A) beside the stemmed words');
SELECT is(pg_temp.weighted(pg_temp.dv('Ticket PROJ-4821 tracks it'), 'D'), ARRAY['4821', 'proj'],
          'its parts are weighted D');
SELECT is(pg_temp.lexemes(pg_temp.dv('in /etc/atlas/config.yaml today')),
          ARRAY['atlas', 'config', 'config.yaml', 'etc', 'etc/atlas/config.yaml', 'today', 'yaml'],
          'a path: whole, its segments, a file name and its parts');
SELECT is(pg_temp.lexemes(pg_temp.dv('See https://www.github.com/acme/atlas/pull/1234')),
          ARRAY['1234', 'acm', 'atlas', 'github', 'pull', 'see', 'www.github.com', 'www.github.com/acme/atlas/pull/1234'],
          'a URL: whole without its scheme, host, path segments (plain ones stemmed); no www, com, https');
SELECT is(pg_temp.lexemes(pg_temp.dv('cut release/2.4 and v3.0.0-rc1')),
          ARRAY['2.4', '3.0.0', 'cut', 'rc', 'rc1', 'releas', 'release/2.4', 'v3.0.0', 'v3.0.0-rc1'],
          'versions: dotted numbers stay whole; one-character parts (v, 0, 1) are dropped');
SELECT is(pg_temp.lexemes(pg_temp.dv('failed with ERR_CONNECTION_RESET')),
          ARRAY['connect', 'err', 'err_connection_reset', 'fail', 'reset'],
          'snake case: whole, and its words stemmed as words');
SELECT is(pg_temp.lexemes(pg_temp.dv('mail dana@example.com')),
          ARRAY['dana', 'dana@example.com', 'exampl', 'example.com', 'mail'],
          'e-mail: whole, local part, domain');
SELECT is(pg_temp.weighted(pg_temp.dv('eu-west-1 on t3.large'), 'D'), ARRAY['eu', 'larg', 'west'],
          'parts of one character and single digits are dropped');
SELECT ok(NOT pg_temp.dv('see x.com and y.org') @@ 'com | org'::tsquery, 'common domain parts (com, org) are not indexed');

-- ============================================================ documents: CJK
SELECT is(pg_temp.lexemes(pg_temp.dv('会議は明日')), (SELECT array_agg(x ORDER BY x) FROM unnest(ARRAY['会議', '議は', 'は明', '明日']) x),
          'a CJK run: overlapping bigrams');
SELECT is(pg_temp.weighted(pg_temp.dv('我们下周发布新版本的搜索功能', 'simple'), 'A') @> ARRAY['搜索', '功能', '发布'], true,
          'Chinese: the bigrams of the words are there, weighted A');
SELECT is(pg_temp.lexemes(pg_temp.dv('회의는 猫 ok')), (SELECT array_agg(x ORDER BY x) FROM unnest(ARRAY['ok', '猫', '의는', '회의']) x),
          'Korean: 회의는 contains 회의; a run of one character is itself');
SELECT is(pg_temp.lexemes(pg_temp.dv('データベース')), (SELECT array_agg(x ORDER BY x) FROM unnest(ARRAY['デー', 'ータ', 'タベ', 'ベー', 'ース']) x),
          'Katakana: bigrams (the long vowel mark belongs to the run)');

-- ============================================================ documents: languages
SELECT is(pg_temp.lexemes(pg_temp.dv('die Häuser sind fertig', 'german')), ARRAY['fertig', 'haus'],
          'German: stemmed with the german dictionary, its stop words dropped');
SELECT is(pg_temp.lexemes(pg_temp.dv('отчёты готовы', 'russian')), ARRAY['готов', 'отчет'], 'Russian: stemmed');
SELECT is(pg_temp.lexemes(pg_temp.dv('the house', 'simple')), ARRAY['house', 'the'], 'simple: no stemming, no stop words');
SELECT is(pg_temp.dv('', 'english'), ''::tsvector, 'an empty body is an empty vector');
SELECT is(pg_temp.dv(E'a\\b''c x\\y.z', 'english') @@ E'''x\\\\y.z'''::tsquery, true,
          'backslashes and quotes in an identifier survive the vector''s input syntax');
SELECT is(pg_temp.lexemes(pg_temp.dv(repeat('x', 3000) || '.yy ok')), ARRAY['ok', 'yy'],
          'an identifier over the lexeme size limit is dropped, as to_tsvector drops long words');

-- ============================================================ queries
SELECT is(pg_temp.qt('the PROJ-4821 fix'), ARRAY['proj-4821', 'proj', '4821', 'fix'],
          'query terms: an identifier whole, then its letter and digit runs; stop words go');
SELECT is(pg_temp.qt('4821'), ARRAY['4821'], 'query: a bare number');
SELECT is(pg_temp.qt('Config.YAML export.py'), ARRAY['config.yaml', 'config', 'yaml', 'export.py', 'export', 'py'],
          'query terms: file names, lower-cased');
SELECT is(pg_temp.qt('https://github.com/acme/atlas/pull/1234'),
          ARRAY['github.com/acme/atlas/pull/1234', 'acm', 'atlas', 'pull', '1234', 'github'],
          'query terms: a URL without its scheme, its runs (no com)');
CREATE FUNCTION pg_temp.tq(p text, c regconfig[] DEFAULT '{english}', n integer DEFAULT 32) RETURNS tsquery LANGUAGE sql IMMUTABLE AS
$$ SELECT history._query_tsquery(p, c, n) $$;
SELECT is(pg_temp.tq('the PROJ-4821 fix')::text, $$'proj-4821' | 'fix' | 'proj' & '4821'$$,
          'query tsquery: an identifier matches whole, or where all its parts occur; words are alternatives');
SELECT is(pg_temp.tq('connection-reset', '{english,simple}')::text, $$'connection-reset' | ( 'connect' | 'connection' ) & 'reset'$$,
          'query tsquery: a part stemmed differently by two languages may match either way');
SELECT is(pg_temp.tq('the of'), NULL, 'query tsquery: NULL without a term');
SELECT is(pg_temp.tq(E'it''s x\\y o''brien')::text, E'''x\\\\y'' | ''o'' | ''brien''', 'query tsquery: quotes and backslashes are quoted');
SELECT is(pg_temp.qt('会議 搜索功能'), ARRAY['会議', '搜索', '索功', '功能'], 'query: CJK bigrams, first seen first');
SELECT is(pg_temp.qt('meetings meeting MEETING'), ARRAY['meet'], 'query: distinct lexemes');
SELECT is(pg_temp.qt('!apple & (banana | cherry:*) <-> ''x'''), ARRAY['appl', 'banana', 'cherri', 'x'],
          'query: tsquery operators are punctuation, never operators');
SELECT is(pg_temp.tq('apple:A launch:*')::text, $$'apple:a' | 'launch' | 'appl'$$,
          'query: a weight suffix makes an identifier whose part is the word');
SELECT is(pg_temp.qt('Meetings, the reports: moved!'), pg_temp.qt('Meetings, the reports: moved!', '{english,english}'),
          'query: the words-only fast path (one language) gives the general path''s terms');
SELECT is(pg_temp.tq('Meetings, the reports: moved!'), pg_temp.tq('Meetings, the reports: moved!', '{english,english}'),
          'query: and its tsquery');
SELECT is(pg_temp.qt('', '{english}'), '{}'::text[], 'query: empty');
SELECT is(pg_temp.qt('the of and', '{english}'), '{}'::text[], 'query: stop words only');
SELECT is(pg_temp.qt('a b c d e', '{simple}', 3), ARRAY['a', 'b', 'c'], 'query: at most p_max_terms terms, the first seen');
SELECT is(pg_temp.qt('Häuser the report', '{english,german}'), ARRAY['häuser', 'haus', 'report'],
          'query: each configuration''s lexeme; a stop word of one configuration is dropped for all');
SELECT is(pg_temp.qt('die Häuser', '{english,german}'), ARRAY['häuser', 'haus'],
          'query: die is a German stop word, so it is no term');
SELECT ok(pg_temp.dv('Ticket PROJ-4821 tracks it') @@ pg_temp.tq('4821'), 'a part typed alone matches the identifier''s document');
SELECT ok(NOT pg_temp.dv('PROJ-1234 is done') @@ pg_temp.tq('PROJ-4821'),
          'an identifier typed does not match another identifier sharing a part (proj)');
SELECT ok(pg_temp.dv('in /etc/atlas/config.yaml') @@ pg_temp.tq('atlas/config.yaml'),
          'a typed fragment of a path matches through its parts');
SELECT ok(pg_temp.dv('会議は明日の午後3時に変更になりました', 'simple') @@ pg_temp.tq('会議', '{english}'),
          'a Japanese word matches the bigrams of a sentence analysed in another configuration');

-- ============================================================ volatility and privileges
SELECT is((SELECT array_agg(p.proname || ':' || p.provolatile::text || p.proparallel::text ORDER BY p.proname) FROM pg_proc p
            WHERE p.oid IN ('history._text_tokens(text)'::regprocedure, 'history._document_vector(text, regconfig)'::regprocedure,
                            'history._identifier_parts(text)'::regprocedure, 'history._query_lexemes(text, regconfig[])'::regprocedure,
                            'history._query_terms(text, regconfig[], integer)'::regprocedure,
                            'history._query_tsquery(text, regconfig[], integer)'::regprocedure,
                            'history._query_analysis(text, regconfig[], integer)'::regprocedure)),
          ARRAY['_document_vector:is', '_identifier_parts:is', '_query_analysis:is', '_query_lexemes:is', '_query_terms:is',
                '_query_tsquery:is', '_text_tokens:is'],
          'the analysis is IMMUTABLE and PARALLEL SAFE');
SELECT ok(NOT has_function_privilege('history_runtime', 'history._document_vector(text, regconfig)', 'execute')
          AND NOT has_function_privilege('history_searcher', 'history._query_terms(text, regconfig[], integer)', 'execute'),
          'the analysis functions are internal');

-- ============================================================ conversations' languages, the projection
SELECT is(history._query_languages(), ARRAY['english']::regconfig[], 'query languages: the default when no conversation has another');
DO $world$
BEGIN
    PERFORM history.upsert_account('ta-ann', 'person');
    PERFORM history.upsert_conversation('ta-en', 'group');
    PERFORM history.upsert_conversation('ta-de', 'group', 'Haus', 'german');
    PERFORM history.upsert_conversation('ta-ja', 'group', NULL, 'simple');
    PERFORM history.post_message('ta-1', 'ta-en', 'ta-ann', 'Ticket PROJ-4821 tracks the houses', '2026-01-01 10:00+00');
    PERFORM history.post_message('ta-2', 'ta-de', 'ta-ann', 'die Häuser sind fertig', '2026-01-01 10:01+00');
    PERFORM history.post_message('ta-3', 'ta-ja', 'ta-ann', '会議は明日', '2026-01-01 10:02+00');
END
$world$;
SELECT is((SELECT array_agg(c.language::text ORDER BY c.conversation_id) FROM history.conversations c
            WHERE c.conversation_id LIKE 'ta-%'), ARRAY['german', 'english', 'simple'],
          'upsert_conversation: the given language, else the default');
SELECT is(history._query_languages(), ARRAY['english', 'simple', 'german']::regconfig[],
          'query languages: the default first, then each other conversation language');
SELECT lives_ok($$SELECT history.upsert_conversation('ta-de', 'group', 'Haus 2')$$,
                'upsert_conversation: no language keeps the conversation''s');
SELECT lives_ok($$SELECT history.upsert_conversation('ta-de', 'group', 'Haus 2', 'german')$$,
                'upsert_conversation: the same language again is fine');
SELECT throws_ok($$SELECT history.upsert_conversation('ta-de', 'group', NULL, 'french')$$, 'HS004', NULL,
                 'upsert_conversation: another language for an existing conversation is HS004');
SELECT is((SELECT language::text FROM history.conversations WHERE conversation_id = 'ta-de'), 'german',
          'the language is unchanged after HS004');
SELECT is((SELECT d.document FROM history.message_search_documents d WHERE d.message_id = 'ta-2'),
          history._document_vector('die Häuser sind fertig', 'german'),
          'post_message indexes a message in its conversation''s language');
SELECT is((SELECT d.document FROM history.message_search_documents d WHERE d.message_id = 'ta-1'),
          history._document_vector('Ticket PROJ-4821 tracks the houses', 'english'), 'and in the default language');
SELECT lives_ok($$SELECT history.edit_message('ta-2', 'das Haus ist verkauft', '2026-01-01 11:00+00')$$, 'edit a message');
SELECT is((SELECT d.document FROM history.message_search_documents d WHERE d.message_id = 'ta-2'),
          history._document_vector('das Haus ist verkauft', 'german'), 'edit_message re-indexes in the same language');

SELECT * FROM finish();
ROLLBACK;
