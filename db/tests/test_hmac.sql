-- The audit digest's HMAC (history._hmac_sha256, built on pg_catalog.sha256):
-- RFC 4231's HMAC-SHA-256 vectors, the same bytes as pgcrypto's
-- hmac(..., 'sha256') over many key and message lengths (pgcrypto is installed
-- in a scratch schema inside this file's transaction, then rolled back), and an
-- audit event whose digest pgcrypto wrote still verifies.
BEGIN;
SELECT plan(13);

-- ------------------------------------------------------------ RFC 4231, section 4
SELECT is(history._hmac_sha256(convert_to('Hi There', 'UTF8'), decode(repeat('0b', 20), 'hex')),
          decode('b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7', 'hex'),
          'RFC 4231 test case 1 (20-byte key)');
SELECT is(history._hmac_sha256(convert_to('what do ya want for nothing?', 'UTF8'), convert_to('Jefe', 'UTF8')),
          decode('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843', 'hex'),
          'RFC 4231 test case 2 (key shorter than the digest)');
SELECT is(history._hmac_sha256(decode(repeat('dd', 50), 'hex'), decode(repeat('aa', 20), 'hex')),
          decode('773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe', 'hex'),
          'RFC 4231 test case 3 (50-byte message)');
SELECT is(history._hmac_sha256(decode(repeat('cd', 50), 'hex'),
                               decode('0102030405060708090a0b0c0d0e0f10111213141516171819', 'hex')),
          decode('82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b', 'hex'),
          'RFC 4231 test case 4 (25-byte key)');
SELECT is(history._hmac_sha256(convert_to('Test Using Larger Than Block-Size Key - Hash Key First', 'UTF8'),
                               decode(repeat('aa', 131), 'hex')),
          decode('60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54', 'hex'),
          'RFC 4231 test case 6 (131-byte key: hashed first)');
SELECT is(history._hmac_sha256(convert_to('This is a test using a larger than block-size key and a larger than block-size data. '
                                          'The key needs to be hashed before being used by the HMAC algorithm.', 'UTF8'),
                               decode(repeat('aa', 131), 'hex')),
          decode('9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2', 'hex'),
          'RFC 4231 test case 7 (131-byte key, 152-byte message)');
SELECT is(history._hmac_sha256(NULL, 'k'::bytea), NULL, 'a NULL message gives NULL (STRICT)');

-- ------------------------------------------------------------ same bytes as pgcrypto
CREATE SCHEMA hmac_reference;
CREATE EXTENSION pgcrypto WITH SCHEMA hmac_reference;

-- Keys and messages around SHA-256's 64-byte block and 55/56-byte padding edge,
-- plus long ones, from a deterministic byte stream.
CREATE TEMP TABLE hmac_cases ON COMMIT DROP AS
SELECT k_len, m_len,
       substring(decode(repeat(md5('key' || k_len), 20), 'hex') FROM 1 FOR k_len) AS k,
       substring(decode(repeat(md5('msg' || m_len || k_len), 200), 'hex') FROM 1 FOR m_len) AS m
  FROM unnest(ARRAY[0, 1, 20, 31, 32, 33, 63, 64, 65, 100, 128, 200, 300]) AS k_len,
       unnest(ARRAY[0, 1, 55, 56, 63, 64, 65, 119, 120, 1000, 3000]) AS m_len;

SELECT is((SELECT count(*)::int FROM hmac_cases WHERE k_len > 64), 55, 'the cases include 55 pairs with keys longer than a block');
SELECT is((SELECT coalesce(array_agg(k_len || '/' || m_len ORDER BY k_len, m_len), '{}') FROM hmac_cases
            WHERE history._hmac_sha256(m, k) IS DISTINCT FROM hmac_reference.hmac(m, k, 'sha256')),
          '{}'::text[], 'history._hmac_sha256 = pgcrypto''s hmac(..., ''sha256'') for 143 key/message length pairs');
SELECT is((SELECT coalesce(array_agg(q ORDER BY q), '{}')
             FROM unnest(ARRAY['', 'launch monday', 'Ärger über Öl', '会議は月曜日', repeat('long query ', 500)]) AS q,
                  (SELECT secret FROM history.query_digest_keys ORDER BY digest_key_id LIMIT 1) AS key
            WHERE history._hmac_sha256(convert_to(history._normalise_query(q), 'UTF8'), key.secret)
                  IS DISTINCT FROM hmac_reference.hmac(convert_to(history._normalise_query(q), 'UTF8'), key.secret, 'sha256')),
          '{}'::text[], 'the digest of normalised queries under the deployed key matches pgcrypto''s');

-- ------------------------------------------------------------ an event pgcrypto signed verifies
DO $world$
BEGIN
    PERFORM history.upsert_account('hm-bot', 'agent');
    PERFORM history.upsert_account('hm-ann', 'person');
    PERFORM history.upsert_conversation('hm-chan', 'group');
    PERFORM history.add_member('hm-chan', 'hm-bot', '2026-01-01 00:00+00');
    PERFORM history.add_member('hm-chan', 'hm-ann', '2026-01-01 00:00+00');
    PERFORM history.post_message('hm-q', 'hm-chan', 'hm-ann', 'when is the launch', '2026-01-02 00:00+00');
    PERFORM set_config('hm.run', history.begin_run('hm-bot', 'hm-chan', 'hm-ann', 'hm-q')::text, true);
END
$world$;

-- As an event written when the digest came from pgcrypto (schema `history` had its hmac).
INSERT INTO history.conversation_search_events (
    search_event_id, run_key, agent_key, query_digest, digest_key_id, speaker, effective_limit, query_term_count,
    hit_message_ids, selected_message_ids, hit_rankings, selections, excluded_speaker, excluded_time,
    excluded_perspective, excluded_audience, excluded_lineage, excluded_alive, excluded_in_context, excluded_budget,
    candidates_capped, status, budget_used, budget_remaining)
SELECT '0b5e55ed-0000-4000-8000-000000000017', r.run_key, r.agent_key,
       hmac_reference.hmac(convert_to(history._normalise_query('Launch  Date'), 'UTF8'), k.secret, 'sha256'),
       k.digest_key_id, 'anyone', 8, 2, '{}', '{}', '[]', '[]', 0, 0, 0, 0, 0, 0, 0, 0, false, 'ok', 0, 400
  FROM history.runs r, history.query_digest_keys k
 WHERE r.run_token = current_setting('hm.run')::uuid
 ORDER BY k.digest_key_id DESC LIMIT 1;

SELECT is(history.verify_query_digest('0b5e55ed-0000-4000-8000-000000000017', 'launch date'), true,
          'an event whose digest pgcrypto computed verifies its query');
SELECT is(history.verify_query_digest('0b5e55ed-0000-4000-8000-000000000017', 'launch data'), false,
          '... and not another query');

-- ------------------------------------------------------------ nothing of an extension in schema history
SELECT is((SELECT coalesce(array_agg(e.extname::text || ': ' || p.oid::regprocedure::text ORDER BY p.oid), '{}')
             FROM pg_catalog.pg_depend d
             JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
             JOIN pg_catalog.pg_proc p ON d.classid = 'pg_catalog.pg_proc'::regclass AND p.oid = d.objid
            WHERE d.deptype = 'e' AND p.pronamespace = 'history'::regnamespace),
          '{}'::text[], 'no function of schema history belongs to an extension');

SELECT * FROM finish();
ROLLBACK;
