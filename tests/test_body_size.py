"""Body size (docs/decisions.md, "Body size"): bounded on the way in and on the way out.

* Ingestion (``post_message``, ``edit_message``, ``record_reply``) refuses a body
  over ``search_settings.max_body_bytes`` (default 1 MiB of UTF-8) with HS001
  naming its size, and writes nothing.
* Whatever a stored body holds (huge ones are written here directly as the
  owner, past the ingestion check, as a restore or an old import could), a
  search succeeds and returns at most ``max_returned_body_bytes`` (10 000) of
  each body, cut between two UTF-8 characters and flagged ``body_truncated``,
  so at most 1 MB of text for 20 hits with their neighbours.
"""

from __future__ import annotations

import json

import psycopg
import pytest

from tests.harness import call_search

MIB = 1048576
CAP = 10_000


def base_world(c: psycopg.Connection) -> None:
    for account, kind in [("bot", "agent"), ("alice", "person"), ("bob", "person")]:
        c.execute("SELECT history.upsert_account(%s, %s)", (account, kind))
    c.execute("SELECT history.upsert_conversation('team', 'group')")
    for account in ("bot", "alice", "bob"):
        c.execute("SELECT history.add_member('team', %s, '2026-01-01')", (account,))


def sqlstate_and_message(conn, stmt, args=()):
    with pytest.raises(psycopg.Error) as err:
        conn.execute(stmt, args)
    return err.value.diag.sqlstate, err.value.diag.message_primary


def test_ingestion_refuses_a_body_over_the_maximum(db_dsn, connect_as):
    with psycopg.connect(db_dsn, autocommit=True) as admin:
        base_world(admin)
    rt = connect_as("history_runtime")
    at_limit = "é" * (MIB // 2)  # 1 MiB exactly, in two-byte characters
    over = "a" + at_limit
    rt.execute("SELECT history.post_message('m1', 'team', 'alice', %s, '2026-02-01')", (at_limit,))
    state, message = sqlstate_and_message(
        rt, "SELECT history.post_message('m2', 'team', 'alice', %s, '2026-02-02')", (over,))
    assert state == "HS001" and "1048577 bytes" in message and "1048576" in message and "'m2'" in message
    state, message = sqlstate_and_message(rt, "SELECT history.edit_message('m1', %s, '2026-02-03')", (over,))
    assert state == "HS001" and "1048577 bytes" in message

    rt.execute("SELECT history.post_message('m3', 'team', 'alice', 'reply to this', '2026-02-04')")
    run = rt.execute("SELECT history.begin_run('bot', 'team', 'alice', 'm3')").fetchone()[0]
    state, message = sqlstate_and_message(
        rt, "SELECT history.record_reply(%s, 'r1', %s, '2026-02-05')", (run, over))
    assert state == "HS001" and "1048577 bytes" in message

    with psycopg.connect(db_dsn, autocommit=True) as admin:
        assert admin.execute("SELECT array_agg(message_id ORDER BY message_id) FROM history.messages"
                             ).fetchone()[0] == ["m1", "m3"]
        assert admin.execute("SELECT count(*) FROM history.message_events").fetchone()[0] == 2  # no edit
        assert admin.execute("SELECT ended_at IS NULL FROM history.runs").fetchone()[0]
        # a DBA's setting is the limit
        admin.execute("UPDATE history.search_settings SET max_body_bytes = 10")
    rt.execute("SELECT history.post_message('m4', 'team', 'alice', '0123456789', '2026-02-06')")
    state, message = sqlstate_and_message(
        rt, "SELECT history.post_message('m5', 'team', 'alice', '0123456789a', '2026-02-06')")
    assert state == "HS001" and "11 bytes" in message and "maximum of 10 bytes" in message


def all_bodies(result: dict) -> list[dict]:
    """Every message object of a search result, hits and neighbours, repeats included."""
    out = []
    for h in result["hits"] or []:
        out.append(h)
        out += h["before"] + h["after"]
    return out




def test_huge_stored_bodies_are_cut_and_flagged(db_dsn, connect_as):
    with psycopg.connect(db_dsn, autocommit=True) as admin:
        base_world(admin)
        for i in range(40):
            admin.execute("SELECT history.post_message(%s, 'team', %s, %s, %s::timestamptz)",
                          (f"m{i:02d}", "alice" if i % 2 else "bob", f"launch note {i}", f"2026-02-01T{i // 4:02d}:{i % 4 * 10:02d}:00Z"))
        admin.execute("SELECT history.post_message('now', 'team', 'alice', 'so?', '2026-03-01')")
        # As the owner, past the ingestion check: twelve bodies of 24.5 MB (the failing case:
        # every matching search then failed with 54000 after 19 s) and one of 20 MB in two-byte characters.
        huge = {f"m{i:02d}": None for i in range(0, 36, 3)}
        admin.execute("""UPDATE history.message_events e SET body = repeat('launch ', 3500000)
                          FROM history.messages m WHERE m.current_event_key = e.event_key AND m.message_id = ANY (%s)""",
                      (list(huge),))
        admin.execute("""UPDATE history.message_events e SET body = 'a' || repeat('é', 10000000)
                          FROM history.messages m WHERE m.current_event_key = e.event_key AND m.message_id = 'm37'""")
        stored = dict(admin.execute(
            """SELECT m.message_id, left(e.body, 10001) FROM history.messages m
                 JOIN history.message_events e ON e.event_key = m.current_event_key""").fetchall())
        sizes = dict(admin.execute(
            """SELECT m.message_id, octet_length(e.body) FROM history.messages m
                 JOIN history.message_events e ON e.event_key = m.current_event_key""").fetchall())
        assert sizes["m00"] == 24_500_000 and sizes["m37"] == 20_000_001
        run = admin.execute("SELECT history.begin_run('bot', 'team', 'alice', 'now')").fetchone()[0]

    searcher = connect_as("history_searcher")
    result = call_search(searcher, run, "launch", limit=20)
    shown = all_bodies(result)
    assert len(result["hits"]) == 20 and len(shown) > 60
    returned = {m["message_id"] for m in shown}
    assert {"m37"} | set(huge) & returned, "the test must return some huge bodies"
    for m in shown:
        body, size = m["body"], sizes[m["message_id"]]
        assert m["body_truncated"] is (size > CAP), m["message_id"]
        assert len(body.encode()) <= CAP
        assert body == stored[m["message_id"]][:len(body)]  # a prefix of the stored text
        if m["message_id"] == "m37":
            # 'a' and 4 999 two-byte characters: the 5 000th would end at byte 10 001
            assert body == "a" + "é" * 4999 and len(body.encode()) == 9999
        elif size > CAP:
            assert len(body.encode()) == CAP
    assert sum(len(m["body"].encode()) for m in shown) <= 1_000_000
    assert "m37" in returned

    # The client shows the flag, and so does the prompt text.
    from history_search.models import SearchResult
    from history_search.prompt import to_prompt

    parsed = SearchResult.from_dict(result)
    flagged = [h for h in parsed.hits if h.body_truncated] + \
              [n for h in parsed.hits for n in h.before + h.after if n.body_truncated]
    assert flagged and all(len(x.body.encode()) <= CAP for x in flagged)
    assert "[message cut by the search: the stored text is longer than what was returned]" in \
        to_prompt(parsed, max_chars=1_000_000)
    assert json.loads(json.dumps(parsed.to_dict()))["hits"][0]["body_truncated"] in (True, False)


def test_one_search_returns_at_most_a_megabyte(db_dsn, connect_as):
    """20 hits with two neighbours each side, every body over the cap: 100 x 10 000 bytes."""
    with psycopg.connect(db_dsn, autocommit=True) as admin:
        base_world(admin)
        with admin.cursor() as cur:
            cur.executemany(
                "SELECT history.post_message(%s, 'team', 'bob', %s, %s::timestamptz)",
                [(f"m{i:03d}", f"launch {i} " + "x" * 12_000, f"2026-02-01T00:00:00Z")
                 for i in range(120)])
            # hits tie and come in id order from m000: two earlier messages are m000's before-neighbours
            cur.executemany("SELECT history.post_message(%s, 'team', 'alice', %s, '2026-01-31')",
                            [(f"early{i}", "y" * 12_000) for i in range(2)])
        admin.execute("SELECT history.post_message('now', 'team', 'alice', 'so?', '2026-03-01')")
        run = admin.execute("SELECT history.begin_run('bot', 'team', 'alice', 'now')").fetchone()[0]
    result = call_search(connect_as("history_searcher"), run, "launch", limit=20)
    shown = all_bodies(result)
    assert len(result["hits"]) == 20 and len(shown) == 100
    assert all(m["body_truncated"] for m in shown)
    assert sum(len(m["body"].encode()) for m in shown) == 1_000_000
