"""Adversarial query texts and arguments against history.search_history (docs/decisions.md, "Adversarial tests").

A fixed world (below) with a known eligible set, one run, and a real
``history_searcher`` login. Hypothesis throws query texts at it — tsquery
operators, quotes, backslashes, control characters next to where a NUL would
be, every Unicode general category, inputs beyond ``max_query_chars`` (refused),
more terms than ``max_query_terms``, white space and stop words only — and
fuzzes speaker, after, before and limit. Every call must

* succeed (any text is a valid query) with status ``ok`` and only eligible
  messages, hits and neighbours alike, or fail with an ``HS`` SQLSTATE whose
  message names the bad value;
* write exactly one audit row and one ``search_audit`` trace entry when it
  succeeds, and nothing at all (no event, trace entry or evidence) when it fails;
* leave the query text nowhere: not in the audit row, the run trace, an error
  (message, detail, hint, context) or a notice. Each fuzzed text is wrapped in
  unique marker words, so an echo of any part of it is found.

NUL cannot be sent as PostgreSQL text: the client refuses it with ``HS001``
before sending, raw drivers fail before the function runs (docs/decisions.md,
"Adversarial tests"); either way nothing is audited.
"""

from __future__ import annotations

import contextlib
import string
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Iterator

import psycopg
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from psycopg import sql
from psycopg.rows import dict_row

from history_search.client import Search
from history_search.errors import InvalidArgument

from tests.harness import call_search

# --------------------------------------------------------------------------
# The world
# --------------------------------------------------------------------------

UTC = timezone.utc


def at(day: str) -> datetime:
    return datetime.fromisoformat(f"2026-{day}T12:00:00+00:00")


# conversation, kind, [(account, since, until)]
CONVERSATIONS = [
    ("team", "group", [("agent", "01-01", None), ("alice", "01-01", None), ("bob", "01-01", None),
                       ("carol", "02-15", None)]),
    ("team2", "group", [("agent", "01-01", "02-10"), ("agent", "02-20", None), ("alice", "01-01", None),
                        ("bob", "01-01", None), ("carol", "01-01", None)]),
    ("dm_bob", "direct", [("agent", "01-01", None), ("bob", "01-01", None)]),
    ("secret", "group", [("agent", "01-01", None), ("carol", "01-01", None)]),
    ("elsewhere", "group", [("agent2", "01-01", None), ("alice", "01-01", None), ("bob", "01-01", None)]),
]

# message id, conversation, author, body, day, sources
MESSAGES = [
    ("t01", "team", "alice", "the launch is on monday", "01-10", []),
    ("t02", "team", "bob", "budget review & plan | q1", "01-20", []),
    ("t03", "team", "alice", "launch moved: café naïve 日本語 🎉", "02-20", []),
    ("t04", "team", "bob", "budget & plan | review <-> C++ o'reilly don't back\\slash", "02-21", []),
    ("t05", "team", "agent", "I will prepare the launch notes: straße İstanbul ǅ", "02-22", []),
    ("t06", "team", "carol", "state-of-the-art foo:* (bar) !baz 'quoted' \"dq\" review", "02-23", []),
    ("t07", "team", "alice", "monday budget 42 3.14 http://example.com/x?y=z a@b.com", "02-24", []),
    ("t08", "team", "bob", "deleted launch budget review", "02-25", []),
    ("d01", "dm_bob", "bob", "private launch budget review monday", "02-21", []),
    ("t09", "team", "alice", "launch budget review monday, from the private chat", "02-26", ["d01"]),
    ("t10", "team", "bob", "review of the budget, launch checklist", "02-27", []),
    ("t11", "team", "alice", "when is the launch? budget?", "02-28", []),
    ("t12", "team", "carol", "final: launch monday, budget approved", "03-01", []),
    ("g01", "team2", "bob", "gap launch budget review monday", "02-12", []),
    ("g02", "team2", "carol", "team2 launch budget review monday", "02-22", []),
    ("s01", "secret", "carol", "secret launch budget review monday", "02-22", []),
    ("e01", "elsewhere", "alice", "elsewhere launch budget review monday", "02-22", []),
]
DELETED = ["t08"]
CURRENT = "t11"
LOADED = ["t10"]

# Eligible for run(agent, team, requester alice, current t11, loaded t10), default
# audience {alice, bob, carol}: t01, t02 precede carol's membership; t08 is deleted;
# t09 draws on the direct conversation d01 that alice and carol cannot read; g01
# falls in the agent's absence from team2; d01, s01 fail the audience; e01 is
# outside the agent's perspective; t10 and t11 are in context.
ELIGIBLE = {"t03", "t04", "t05", "t06", "t07", "t12", "g02"}
BODIES = {m[0]: m[3] for m in MESSAGES}
AUTHORS = {m[0]: m[2] for m in MESSAGES}
SENT = {m[0]: at(m[4]) for m in MESSAGES}


def build_world(conn: psycopg.Connection) -> uuid.UUID:
    """The world above, through the runtime surface; returns the run token."""
    for account, kind in [("agent", "agent"), ("agent2", "agent"), ("alice", "person"), ("bob", "person"),
                          ("carol", "person")]:
        conn.execute("SELECT history.upsert_account(%s, %s)", (account, kind))
    for conv, kind, members in CONVERSATIONS:
        conn.execute("SELECT history.upsert_conversation(%s, %s)", (conv, kind))
        for account, since, until in members:
            conn.execute("SELECT history.add_member(%s, %s, %s)", (conv, account, at(since)))
            if until:
                conn.execute("SELECT history.remove_member(%s, %s, %s)", (conv, account, at(until)))
    for mid, conv, author, body, day, sources in MESSAGES:
        conn.execute("SELECT history.post_message(%s, %s, %s, %s, %s, %s)", (mid, conv, author, body, at(day), sources))
    for mid in DELETED:
        conn.execute("SELECT history.delete_message(%s, %s)", (mid, SENT[mid] + timedelta(hours=1)))
    return conn.execute("SELECT history.begin_run('agent', 'team', 'alice', %s, %s)", (CURRENT, LOADED)).fetchone()[0]


@dataclass
class World:
    """A migrated database with the world, an admin connection and real logins."""

    url: str
    admin: psycopg.Connection
    run: uuid.UUID
    logins: dict[str, str] = field(default_factory=dict)  # group role -> conninfo of a login in it
    roles: list[str] = field(default_factory=list)

    def login(self, group: str) -> str:
        if group not in self.logins:
            name = f"hs_adv_{group.removeprefix('history_')}_{uuid.uuid4().hex[:8]}"
            password = uuid.uuid4().hex
            self.admin.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {} IN ROLE {}").format(
                sql.Identifier(name), sql.Literal(password), sql.Identifier(group)))
            self.roles.append(name)
            self.logins[group] = psycopg.conninfo.make_conninfo(self.url, user=name, password=password)
        return self.logins[group]

    def connect(self, group: str, **kwargs) -> "Session":
        kwargs.setdefault("autocommit", True)
        c = psycopg.connect(self.login(group), **kwargs)
        return Session(c)

    def state(self, run: uuid.UUID | None = None) -> tuple:
        """What a search writes, for one run: events, trace entries, evidence, counters."""
        return self.admin.execute(
            """SELECT (SELECT count(*) FROM history.conversation_search_events e WHERE e.run_key = r.run_key),
                      (SELECT count(*) FROM history.run_trace t WHERE t.run_key = r.run_key),
                      (SELECT count(*) FROM history.run_evidence v WHERE v.run_key = r.run_key),
                      r.evidence_count, r.search_count
                 FROM history.runs r WHERE r.run_token = %s""", (run or self.run,)).fetchone()

    def audit_dump(self, event_id) -> str:
        """The audit row and every trace entry of the event, as text."""
        row = self.admin.execute(
            """SELECT row_to_json(e)::text || ' ' || coalesce((SELECT string_agg(row_to_json(t)::text, ' ')
                                                          FROM history.run_trace t WHERE t.event_key = e.event_key), '')
                 FROM history.conversation_search_events e WHERE e.search_event_id = %s""", (event_id,)).fetchone()
        assert row is not None, f"no audit row for search event {event_id}"
        return row[0]


class Session:
    """A login connection that records every notice the server sends it."""

    def __init__(self, conn: psycopg.Connection):
        self.conn = conn
        self.notices: list[str] = []
        conn.add_notice_handler(self._notice)

    def _notice(self, diag) -> None:
        self.notices.append(" | ".join(str(x) for x in (diag.severity, diag.sqlstate, diag.message_primary,
                                                         diag.message_detail, diag.message_hint, diag.context)))

    def execute(self, *args, **kwargs):
        return self.conn.execute(*args, **kwargs)

    def close(self) -> None:
        self.conn.close()


@contextlib.contextmanager
def world_database(pg_server, template_db, prefix: str) -> Iterator[World]:
    """A fresh database with the world (for a test module); dropped with its login roles afterwards."""
    name = pg_server.new_name(prefix)
    url = pg_server.create_database(name, template_db)
    admin = psycopg.connect(url, autocommit=True)
    world = World(url, admin, build_world(admin))
    try:
        yield world
    finally:
        world.admin.close()
        pg_server.drop_database(name)
        with pg_server.admin() as c:
            for role in world.roles:
                c.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


@pytest.fixture(scope="module")
def world(pg_server, template_db):
    with world_database(pg_server, template_db, "hs_advq") as w:
        yield w


@pytest.fixture(scope="module")
def searcher(world):
    s = world.connect("history_searcher")
    yield s
    s.close()


# --------------------------------------------------------------------------
# One search, and everything it must (not) do
# --------------------------------------------------------------------------

def error_text(exc: psycopg.Error) -> str:
    d = exc.diag
    return " | ".join(str(x) for x in (exc, d.message_primary, d.message_detail, d.message_hint, d.context,
                                       d.internal_query, d.statement_position))


def search(world: World, session: Session, query, *, speaker="anyone", after=None, before=None, limit=8,
           run=None, secrets=()):
    """Call search_history; return (result dict, None) or (None, HS error). Checks what every call must."""
    run = run or world.run
    before_state = world.state(run)
    session.notices.clear()
    try:
        result = call_search(session.conn, run, query, speaker, after, before, limit)
    except psycopg.Error as exc:
        sqlstate = exc.diag.sqlstate or ""
        assert sqlstate.startswith("HS"), f"non-HS error {sqlstate}: {exc}"
        text = error_text(exc)
        for s in secrets:
            assert s not in text, f"the query text leaked into the error: {text}"
        assert world.state(run) == before_state, "a failed search wrote something"
        assert session.notices == [], session.notices
        return None, exc
    assert session.notices == [], f"search_history sent notices: {session.notices}"
    after_state = world.state(run)
    assert after_state[0] == before_state[0] + 1, "not exactly one audit row"
    assert after_state[1] == before_state[1] + 1, "not exactly one trace entry"
    assert after_state[4] == before_state[4] + 1
    assert result["status"] == "ok", result["status"]
    returned = []
    for hit in result["hits"]:
        returned.append(hit["message_id"])
        assert hit["body"] == BODIES[hit["message_id"]]
        for nb in hit["before"] + hit["after"]:
            returned.append(nb["message_id"])
            assert nb["body"] == BODIES[nb["message_id"]]
    leaked = set(returned) - ELIGIBLE
    assert not leaked, f"ineligible messages returned: {sorted(leaked)}"
    assert result["budget_used"] == after_state[3] == after_state[2]
    assert result["budget_used"] + result["budget_remaining"] == 400
    dump = world.audit_dump(result["search_event_id"])
    for s in secrets:
        assert s not in dump, f"the query text leaked into the audit: {dump}"
    assert world.admin.execute("SELECT history.verify_query_digest(%s, %s)",
                               (result["search_event_id"], query)).fetchone()[0]
    return result, None


# --------------------------------------------------------------------------
# Query texts
# --------------------------------------------------------------------------

TSQUERY_BITS = ["&", "|", "!", "<->", "<1>", "<0>", "<-1>", "<99999999999>", "<2147483648>", ":*", ":A", ":abcd*",
                ":", "*", "(", ")", "((", "))", "'", "''", "\\", "\\'", "'\\'", '"', "-", "or", "OR", "and",
                "not", "!!", "&&", "||", "!(", "):", "''''", "\\\\", "%", "_", "$1", "E'", "$$", ";", "--", "/*",
                "*/", "'launch'", "launch:*", "!launch", "launch & budget", "launch <-> monday", "'a' | 'b'",
                "''launch''", "\\'launch\\'", "launch\\", "'launch\\'"]
VOCAB = ["launch", "budget", "review", "monday", "café", "naïve", "日本語", "🎉", "C++", "o'reilly", "don't",
         "back\\slash", "straße", "İstanbul", "ǅ", "state-of-the-art", "foo:*", "42", "3.14",
         "http://example.com/x?y=z", "a@b.com", "secret", "private", "elsewhere", "gap", "deleted", "LAUNCH",
         "Launch's", "launches", "budgeting"]
STOP_WORDS = ["the", "a", "an", "and", "or", "not", "is", "on", "of", "to", "it", "I", "at", "be", "was", "from",
              "THE", "And"]
# Control characters next to where a NUL would be, format characters, non-characters, the top of Unicode.
CONTROL = ([chr(c) for c in range(1, 32)] + ["\x7f"] + [chr(c) for c in range(0x80, 0xA0)]
           + ["\u200b", "\u200c", "\u200d", "\u200e", "\u202e", "\u2028", "\u2029", "\u2060", "\ufeff", "\ufffd",
              "\ufffe", "\uffff", "\U0001fffe", "\U0010ffff", "\U000e0001", "\u0301", "\u034f"])
WHITESPACE = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u00a0", "\u1680",
              "\u2000", "\u2007", "\u200a", "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\u180e"]
# Every general category Python can put in a str that encodes to UTF-8 (no Cs surrogates).
CATEGORIES = ["Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf",
              "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cn"]

any_char = st.characters(codec="utf-8", exclude_characters="\x00")
fragment = st.one_of(
    st.sampled_from(TSQUERY_BITS),
    st.sampled_from(VOCAB),
    st.sampled_from(STOP_WORDS),
    st.sampled_from(CONTROL),
    st.sampled_from(WHITESPACE),
    st.text(any_char, max_size=12),
    st.sampled_from(CATEGORIES).flatmap(
        lambda c: st.text(st.characters(categories=[c], codec="utf-8", exclude_characters="\x00"),
                          min_size=1, max_size=6)),
)
separator = st.sampled_from(["", " ", "  ", "\t", "\n", "&", "|", " | ", " & ", "<->", "'", "\\", ":*", "\u3000"])
fuzzed_query = st.lists(st.tuples(fragment, separator), max_size=25).map(
    lambda parts: "".join(f + s for f, s in parts))
marker = st.text(alphabet="bcdfghjkmnpqrstvwxz", min_size=8, max_size=8).map(lambda s: "zqx" + s)


def wrap(m1: str, text: str, m2: str, glue: str) -> str:
    """The fuzzed text between two marker words (so an echo of any of it is seen)."""
    return f"{m1}{glue}{text}{glue}{m2}"


@given(text=fuzzed_query, m1=marker, m2=marker, glue=st.sampled_from([" ", "\n", "'", " & ", "\\", ""]))
def test_fuzzed_query_texts(world, searcher, text, m1, m2, glue):
    search(world, searcher, wrap(m1, text, m2, glue), secrets=(m1, m2))


@given(text=fuzzed_query)
def test_fuzzed_query_texts_bare(world, searcher, text):
    """Without markers: white space, operators, stop words alone are valid searches too."""
    result, _ = search(world, searcher, text)
    assert result is not None


@given(category=st.sampled_from(CATEGORIES), data=st.data())
def test_every_unicode_category(world, searcher, category, data):
    chars = st.characters(categories=[category], codec="utf-8", exclude_characters="\x00")
    text = data.draw(st.text(chars, min_size=1, max_size=40))
    m1, m2 = data.draw(marker), data.draw(marker)
    search(world, searcher, wrap(m1, text, m2, " "), secrets=(m1, m2))
    search(world, searcher, text)


@given(text=st.lists(st.sampled_from(STOP_WORDS + WHITESPACE + ["&", "|", "!", "<->", "(", ")", "'", ":*", "\\",
                                                                 '"', "-", "*", ",", ".", "?", "…", "¿"]),
                     max_size=40).map(" ".join))
def test_no_searchable_term_is_an_audited_empty_search(world, searcher, text):
    result, _ = search(world, searcher, text)
    assert result["hits"] == []
    count = world.admin.execute("SELECT query_term_count FROM history.conversation_search_events "
                                "WHERE search_event_id = %s", (result["search_event_id"],)).fetchone()[0]
    assert count == 0


@settings(max_examples=25)
@given(unit=st.one_of(st.sampled_from(["launch ", "a", "'", "\\", "& ", "日本語", "🎉", " ", "x" * 2100 + " "]),
                      st.text(any_char, min_size=1, max_size=30)),
       repeat=st.integers(min_value=200, max_value=40_000), m1=marker)
def test_huge_query_texts(world, searcher, unit, repeat, m1):
    """Any text over max_query_chars (4 000 characters) is HS001 naming its length, writes
    nothing, and echoes none of its text."""
    text = unit * repeat
    assume(len(text) > 4000)
    text = text[:200_000]
    query = f"{m1} {text} {m1}"
    result, exc = search(world, searcher, query, secrets=(m1,))
    assert result is None and exc.diag.sqlstate == "HS001"
    assert exc.diag.message_primary == f"p_query is {len(query)} characters long, over the maximum of 4000"


def test_a_query_over_max_query_chars_is_refused(world, searcher):
    """Over max_query_chars (4 000) characters is HS001 before any work; up to it, every term counts."""
    padding = "zzpad " * 700  # 4 200 characters, one lexeme
    late, exc = search(world, searcher, padding + "launch")
    assert late is None and exc.diag.sqlstate == "HS001"
    assert "4206 characters long, over the maximum of 4000" in str(exc)
    within = "zzpad " * 600  # 3 600 characters
    late, _ = search(world, searcher, within + "launch")
    assert late["hits"]
    # A word over PostgreSQL's 2 047-byte lexeme limit is dropped without a NOTICE reaching the caller.
    long_word, _ = search(world, searcher, "b" * 3000 + " launch")
    assert long_word["hits"]


def test_many_terms_are_cut_at_max_query_terms(world, searcher):
    words = ["zz" + a + b for a in "bcdfghj" for b in "klmnp"]  # 35 distinct non-words
    late, _ = search(world, searcher, " ".join(words + ["launch"]))
    assert late["hits"] == []
    counts = world.admin.execute("SELECT query_term_count FROM history.conversation_search_events "
                                 "WHERE search_event_id = %s", (late["search_event_id"],)).fetchone()[0]
    assert counts == 32
    early, _ = search(world, searcher, " ".join(["launch"] + words))
    assert early["hits"]


@settings(max_examples=30)
@given(words=st.lists(st.text(alphabet=string.ascii_lowercase, min_size=3, max_size=10), min_size=33,
                      max_size=400), m1=marker)
def test_many_terms(world, searcher, words, m1):
    search(world, searcher, " ".join([m1, *words, m1]), secrets=(m1,))


def test_operators_are_words(world, searcher):
    """Typed tsquery syntax never changes the meaning: '!launch' and 'launch & zzz' still find launch."""
    plain, _ = search(world, searcher, "launch")
    ids = {h["message_id"] for h in plain["hits"]}
    assert ids == {"t03", "t05", "t12", "g02"}
    for q in ["!launch", "launch & zzznothing", "!(launch)", "'launch'", "launch:*", "launch <-> zzznothing",
              "launch:A", "\\'launch\\'", "(((launch", "launch' | '", "launch ! ! !"]:
        result, _ = search(world, searcher, q)
        assert {h["message_id"] for h in result["hits"]} == ids, q


# --------------------------------------------------------------------------
# Speaker, after, before, limit
# --------------------------------------------------------------------------

OFFSETS = [UTC, timezone(timedelta(hours=14)), timezone(timedelta(hours=-12)), timezone(timedelta(hours=5, minutes=30))]
moment = st.one_of(
    st.none(),
    st.sampled_from(["infinity", "-infinity"]),
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.sampled_from(OFFSETS)),
    st.sampled_from([at(m[4]) for m in MESSAGES]),
    st.datetimes(min_value=datetime(2026, 1, 1), max_value=datetime(2026, 3, 10), timezones=st.just(UTC)),
)
speaker_value = st.one_of(st.none(), st.sampled_from(["anyone", "requester", "you"]),
                          st.sampled_from(["Anyone", "YOU", " you", "you ", "", "other", "requester'", "'; --",
                                           "\\", "any one", "requester\u200b", "ｙｏｕ"]),
                          st.text(any_char, max_size=100))
limit_value = st.one_of(st.none(), st.integers(min_value=-(2**31), max_value=2**31 - 1),
                        st.sampled_from([0, 1, 2, 8, 20, 21, -1, 2**31 - 1, -(2**31)]))


def key(t):
    if t == "-infinity":
        return (-1, None)
    if t == "infinity":
        return (1, None)
    return (0, t)


def later(a, b) -> bool:
    ka, kb = key(a), key(b)
    if ka[0] != kb[0]:
        return ka[0] > kb[0]
    return ka[0] == 0 and a > b


def as_datetime(t):
    return {"-infinity": datetime.min.replace(tzinfo=UTC), "infinity": datetime.max.replace(tzinfo=UTC)}.get(t, t)


@given(speaker=speaker_value, after=moment, before=moment, limit=limit_value, m1=marker,
       words=st.sampled_from(["launch budget review monday", "launch", "review", "budget monday"]))
def test_fuzzed_arguments(world, searcher, speaker, after, before, limit, m1, words):
    query = f"{words} {m1}"
    result, error = search(world, searcher, query, speaker=speaker, after=after, before=before, limit=limit,
                           secrets=(m1,))
    # The first failing check, in the function's order: speaker, limit, time window.
    if speaker is not None and speaker not in ("anyone", "requester", "you"):
        assert error is not None and error.diag.sqlstate == "HS001"
        named = searcher.execute("SELECT pg_catalog.quote_literal(pg_catalog.left(%s, 64))", (speaker,)).fetchone()[0]
        assert named in error.diag.message_primary
        return
    if limit is not None and limit < 1:
        assert error is not None and error.diag.sqlstate == "HS001"
        assert str(limit) in error.diag.message_primary
        return
    if after is not None and before is not None and later(after, before):
        assert error is not None and error.diag.sqlstate == "HS001"
        for t in (after, before):
            shown = searcher.execute("SELECT %s::timestamptz::text", (t,)).fetchone()[0]
            assert shown in error.diag.message_primary
        return
    assert error is None, error
    effective = min(20, 8 if limit is None else limit)
    assert len(result["hits"]) <= effective
    row = world.admin.execute(
        """SELECT effective_limit, speaker, sent_after IS NOT DISTINCT FROM %s::timestamptz,
                  sent_before IS NOT DISTINCT FROM %s::timestamptz
             FROM history.conversation_search_events WHERE search_event_id = %s""",
        (after, before, result["search_event_id"])).fetchone()
    assert row == (effective, speaker or "anyone", True, True)
    lo, hi = (as_datetime(after) if after is not None else None), (as_datetime(before) if before is not None else None)
    for hit in result["hits"]:
        sent = SENT[hit["message_id"]]
        assert lo is None or sent >= lo
        assert hi is None or sent < hi
        if speaker == "you":
            assert AUTHORS[hit["message_id"]] == "agent" and hit["speaker_role"] == "you"
        if speaker == "requester":
            assert AUTHORS[hit["message_id"]] == "alice" and hit["speaker_role"] == "requester"


def test_null_query_and_null_run_are_hs001(world, searcher):
    _, error = search(world, searcher, None)
    assert error.diag.sqlstate == "HS001" and "p_query" in error.diag.message_primary
    before = world.state()
    with pytest.raises(psycopg.Error) as exc:
        call_search(searcher.conn, None, "launch")
    assert exc.value.diag.sqlstate == "HS001" and "p_run" in exc.value.diag.message_primary
    assert world.state() == before


def test_empty_query_is_an_audited_search(world, searcher):
    result, _ = search(world, searcher, "")
    assert result["hits"] == []


# --------------------------------------------------------------------------
# NUL
# --------------------------------------------------------------------------


@given(prefix=st.text(any_char, max_size=10), suffix=st.text(any_char, max_size=10), m1=marker,
       nuls=st.sampled_from(["\x00", "\x00\x00", "\x01\x00", "\x00\x1f", "\\\x00", "'\x00'"]))
@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
def test_nul_through_the_client_is_hs001_and_unaudited(world, searcher, prefix, suffix, m1, nuls):
    query = f"{m1} {prefix}{nuls}{suffix} {m1}"
    before = world.state()
    client = Search(searcher.conn, world.run)
    with pytest.raises(InvalidArgument) as exc:
        client.search(query)
    assert exc.value.sqlstate == "HS001" and "NUL" in exc.value.message
    assert m1 not in str(exc.value)
    with pytest.raises(InvalidArgument):
        client.search("launch", speaker=f"you{nuls}")
    assert world.state() == before


def test_nul_through_raw_psycopg_never_reaches_the_function(world, searcher):
    """Text parameters: psycopg refuses. Binary parameters and chr(0): the server refuses the
    value itself (22021, 54000) before search_history runs. Nothing is audited either way."""
    before = world.state()
    with pytest.raises(psycopg.DataError) as text_param:
        searcher.execute("CALL history.search_history(%s, %s)", (world.run, "zqxnul\x00launch"))
    assert text_param.value.diag.sqlstate is None  # raised by the driver: nothing was sent
    with pytest.raises(psycopg.Error) as binary_param:
        searcher.execute("CALL history.search_history(%s, %b)", (world.run, "zqxnul\x00launch"))
    assert binary_param.value.diag.sqlstate == "22021"
    assert "zqxnul" not in error_text(binary_param.value)
    with pytest.raises(psycopg.Error) as chr0:
        searcher.execute("CALL history.search_history(%s, 'zqxnul' || chr(0) || 'launch')", (world.run,))
    assert chr0.value.diag.sqlstate == "54000"
    with pytest.raises(psycopg.Error) as escape:
        searcher.execute("CALL history.search_history(%s, E'zqxnul\\000launch'::text)", (world.run,))
    assert escape.value.diag.sqlstate in ("22021", "22P05")  # invalid byte sequence, or untranslatable
    assert world.state() == before


def test_client_search_of_fuzzed_text_matches_raw(world, searcher):
    """The client passes the text through unchanged: the same digest verifies."""
    client = Search(searcher.conn, world.run)
    for query in ["launch & 'budget'", "\\x01\x01\x7f\u202e launch", "日本語 🎉 \ufffe\U0010ffff", "   ", ""]:
        before = world.state()
        result = client.search(query)
        assert world.state()[0] == before[0] + 1
        assert {h.message_id for h in result.hits} <= ELIGIBLE
        assert world.admin.execute("SELECT history.verify_query_digest(%s, %s)",
                                   (result.search_event_id, query)).fetchone()[0]


def test_query_text_is_stored_nowhere(world, searcher):
    """After all the searches of this module, no marker word is in any table of the schema."""
    m = "zqxstorednowherek"
    search(world, searcher, f"{m} launch", secrets=(m,))
    tables = [r[0] for r in world.admin.execute(
        "SELECT c.oid::regclass::text FROM pg_catalog.pg_class c "
        "WHERE c.relnamespace = 'history'::regnamespace AND c.relkind = 'r'").fetchall()]
    assert "history.conversation_search_events" in tables and "history.run_trace" in tables
    for table in tables:
        hits = world.admin.execute(
            sql.SQL("SELECT count(*) FROM {} t WHERE row_to_json(t)::text ~ %s").format(sql.SQL(table)),
            (f"zqx[bcdfghjkmnpqrstvwxz]{{8}}|{m}",)).fetchone()[0]
        assert hits == 0, f"a query marker is stored in {table}"


def test_matched_terms_are_not_audited(world, searcher):
    """The markers above never match a message; matched terms are query words too and must not be
    copied into the audit row, the trace, the evidence or the run (any value, at any depth)."""
    result, _ = search(world, searcher, "Launch BUDGETING reviews zqxmatchedmarker")
    matched = {t for h in result["hits"] for t in h["reasons"]["matched_terms"]}
    assert {"launch", "budget", "review"} <= matched  # the lexemes, as returned to the caller
    rows = world.admin.execute(
        """SELECT to_jsonb(e) FROM history.conversation_search_events e WHERE e.search_event_id = %(e)s
           UNION ALL
           SELECT to_jsonb(t) FROM history.run_trace t JOIN history.runs r USING (run_key) WHERE r.run_token = %(r)s
           UNION ALL
           SELECT to_jsonb(v) FROM history.run_evidence v JOIN history.runs r USING (run_key) WHERE r.run_token = %(r)s
           UNION ALL
           SELECT to_jsonb(r) FROM history.runs r WHERE r.run_token = %(r)s""",
        {"e": result["search_event_id"], "r": world.run}).fetchall()
    values: list[str] = []

    def walk(v):
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        else:
            values.append(str(v).lower())

    for (row,) in rows:
        walk(row)
    assert len(rows) >= 3 and values
    for term in matched | {"zqxmatchedmarker", "budgeting", "reviews"}:
        stored = [v for v in values if term in v]
        assert not stored, f"query term {term!r} stored: {stored}"
