"""``history-search demo``: one small team, a few agent turns, everything the database decides shown.

:func:`run_demo` starts a throwaway PostgreSQL (unless given a DSN), applies
the migrations, loads a small world — a team channel, a standups channel,
direct messages, a private leads group, a person's second (linked) account and
an earlier agent reply built on a direct message — and then plays agent turns:

1. the earlier turn, in a DM, whose reply drew on the linked account's mail thread;
2. the main turn in the team channel: several searches with hits, neighbours and
   ranking reasons, a private message filtered out and explained by the audit
   row's exclusion counts, what the model reads (:func:`~history_search.prompt.to_prompt`),
   the tool rejecting bad arguments, the audit rows a DBA sees, the digest check,
   and the reply delivered with its evidence as lineage;
3. a summary turn that drains the run's 400-message evidence budget;
4. a turn whose delivery is blocked because an identity proof is revoked mid-turn;
5. searches only the project's text analysis answers: a ticket number, a file
   name, a Japanese word (docs/text-analysis.md).

It connects four times, as the four client roles (``history_runtime``,
``history_searcher``, ``history_auditor``, ``history_digest_verifier``) when the login may ``SET ROLE`` to
them (a superuser may), and otherwise as the login itself. Given a DSN, it
writes into that database under a fresh id prefix (``acme-xxxx:``), so it can
run again, and says so first: the sample data stays in that database. It
applies pending migrations there first unless ``migrate=False``.
"""

from __future__ import annotations

import contextlib
import secrets
import sys
import textwrap
import time
from datetime import datetime, timedelta, timezone
from typing import IO, Any, Iterator

import psycopg

from .client import Auditor, Runtime, Search
from .errors import DeliveryBlocked
from .models import SearchHit, SearchResult
from .prompt import to_prompt
from .tool import call_tool

__all__ = ["run_demo"]

WIDTH = 100


class _Out:
    def __init__(self, out: IO[str]):
        self.out = out

    def __call__(self, text: str = "") -> None:
        print(text, file=self.out)

    def section(self, title: str) -> None:
        self()
        self("=" * WIDTH)
        self(title)
        self("=" * WIDTH)

    def wrap(self, text: str, indent: str = "  ") -> None:
        for para in text.split("\n"):
            self(textwrap.fill(para, WIDTH, initial_indent=indent, subsequent_indent=indent) if para else "")


def _short(text: str, width: int) -> str:
    return textwrap.shorten(" ".join(text.split()), width, placeholder="…")


def _t(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%a %b %d %H:%M UTC")


@contextlib.contextmanager
def _connect(dsn: str, role: str) -> Iterator[tuple[psycopg.Connection, str]]:
    """An autocommit connection acting as ``role`` if the login may SET ROLE to it."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        try:
            conn.execute(psycopg.sql.SQL("SET ROLE {}").format(psycopg.sql.Identifier(role)))
            acting = role
        except psycopg.Error:
            acting = conn.info.parameter_status("session_authorization") or "login"
        yield conn, acting


# --------------------------------------------------------------------------
# The world
# --------------------------------------------------------------------------


class World:
    """Ids and times of the sample world (times relative to now, all in the past)."""

    def __init__(self, prefix: str, now: datetime):
        self.p = prefix
        self.now = now
        p = prefix
        self.agent = f"{p}:helper"
        self.alice, self.bob, self.carol, self.dave = (f"{p}:{n}" for n in ("alice", "bob", "carol", "dave"))
        self.alice_mail = f"mail-{p}:alice.kim@example.com"
        self.launch = f"{p}:#atlas-launch"
        self.standups = f"{p}:#standups"
        self.leads = f"{p}:leads-private"
        self.dm_alice = f"{p}:dm-helper-alice"
        self.mail_thread = f"mail-{p}:thread-alice-helper"
        self.tokyo = f"{p}:tokyo-office"
        self.names = {self.agent: "helper", self.alice: "alice", self.bob: "bob", self.carol: "carol",
                      self.dave: "dave", self.alice_mail: "alice (mail)"}
        self.team = [f"{p}:{n}" for n in ("erin", "femi", "gus", "hana", "ivan", "jo", "kai")]
        for a in self.team:
            self.names[a] = a.split(":", 1)[1]

    def ago(self, days: float = 0, hours: float = 0, minutes: float = 0) -> datetime:
        return self.now - timedelta(days=days, hours=hours, minutes=minutes)

    def m(self, name: str) -> str:
        return f"{self.p}:{name}"

    def who(self, account: str) -> str:
        return self.names.get(account, account)


STANDUP_WORK = [
    "the onboarding flow", "billing export", "search indexing", "the admin console", "usage dashboards",
    "API pagination", "email templates", "SSO settings", "flaky CI", "accessibility fixes",
]
STANDUP_DAYS = 60
STANDUP_BLOCKERS = ["none", "none", "waiting on QA", "none", "need test data", "none"]
# The budget turn searches one work item per fortnight (each matches two standups a day, spread out).
DRAIN_QUERIES = ["billing export", "search indexing", "admin console", "usage dashboards", "API pagination",
                 "email templates", "SSO settings", "accessibility fixes", "onboarding flow", "flaky CI"]


def load_world(rt: Runtime, w: World) -> int:
    """Load the sample world through the runtime API; returns the number of messages."""
    people = [(w.alice, "Alice Kim (PM)"), (w.bob, "Bob Osei (eng lead)"), (w.carol, "Carol Diaz (design)"),
              (w.dave, "Dave Lin (security)"), (w.alice_mail, "Alice Kim")]
    rt.upsert_account(w.agent, "agent", "Helper")
    for account, name in people:
        rt.upsert_account(account, "person", name)
    for account in w.team:
        rt.upsert_account(account, "person", w.who(account).title())

    start = w.ago(days=STANDUP_DAYS + 5)
    rt.upsert_conversation(w.launch, "channel", "#atlas-launch")
    rt.upsert_conversation(w.standups, "channel", "#standups")
    rt.upsert_conversation(w.leads, "group", "leads (private)")
    rt.upsert_conversation(w.dm_alice, "direct", None)
    rt.upsert_conversation(w.mail_thread, "direct", "mail: Atlas hosting")
    # Japanese: no PostgreSQL dictionary, so 'simple' (CJK text is bigrammed whatever the language).
    rt.upsert_conversation(w.tokyo, "group", "Tokyo office", "simple")
    for account in (w.agent, w.alice, w.bob, w.carol):
        rt.add_member(w.launch, account, start)
    for account in (w.agent, w.alice, w.bob, w.carol, *w.team):
        rt.add_member(w.standups, account, start)
    for account in (w.agent, w.bob, w.dave):
        rt.add_member(w.leads, account, start)
    for account in (w.agent, w.alice):
        rt.add_member(w.dm_alice, account, start)
    for account in (w.agent, w.alice_mail):
        rt.add_member(w.mail_thread, account, start)
    for account in (w.agent, w.alice, w.bob, w.carol):
        rt.add_member(w.tokyo, account, start)
    # Alice proved the mail address is hers.
    rt.link_identity(w.m("proof-alice-mail"), w.alice, w.alice_mail, w.ago(days=20))

    posts = [
        ("launch-1", w.launch, w.alice, w.ago(days=14, hours=3),
         "Kickoff for Atlas: we're targeting the public launch for the 12th of next month. "
         "Bob owns the rollout checklist, Carol the landing page."),
        ("launch-2", w.launch, w.bob, w.ago(days=14, hours=2, minutes=50),
         "Rollout checklist is in the wiki. Biggest open item is the security review with Dave's team."),
        ("launch-3", w.launch, w.carol, w.ago(days=14, hours=2, minutes=30),
         "Landing page mockups for Atlas are up, feedback by Friday please."),
        ("mail-1", w.mail_thread, w.alice_mail, w.ago(days=10),
         "Forwarding the vendor quote for Atlas hosting: $40k for year one, renewal at $32k. "
         "Please keep this between us until finance signs off."),
        ("leads-1", w.leads, w.dave, w.ago(days=9, hours=5),
         "Heads up: the Atlas security review found two high-severity issues in the auth flow. "
         "If the fixes slip, launch moves to July. Not for the wider channel yet."),
        ("leads-2", w.leads, w.bob, w.ago(days=9, hours=4, minutes=40),
         "Understood, fixes go into this sprint. I'll keep the channel on the current plan."),
        ("launch-4", w.launch, w.carol, w.ago(days=3, hours=6),
         "Landing page is final. The copy still says launching on the 12th."),
        ("launch-5", w.launch, w.bob, w.ago(days=3, hours=5, minutes=45),
         "Auth fixes are merged; waiting on Dave's re-test before we confirm the date."),
        ("launch-6", w.launch, w.alice, w.ago(days=3, hours=5, minutes=30),
         "Thanks both. I'll hold the customer email until the date is confirmed."),
        ("dm-1", w.dm_alice, w.alice, w.ago(days=7, hours=2),
         "@helper what did the vendor quote for Atlas hosting come to?"),
        ("launch-ticket", w.launch, w.bob, w.ago(days=5, hours=1),
         "Ticket PROJ-4821 tracks the login timeout; the fix is in src/auth/session.py"),
        ("tokyo-1", w.tokyo, w.carol, w.ago(days=2, hours=4),
         "会議は明日の午後3時に変更になりました"),
    ]
    for mid, conv, author, at, body in posts:
        rt.post_message(w.m(mid), conv, author, body, at)

    # Two months of standups: 10 people, every morning.
    count = 0
    midnight = w.now.replace(hour=0, minute=0)
    for day in range(STANDUP_DAYS, 0, -1):
        for j, account in enumerate([w.alice, w.bob, w.carol, *w.team]):
            work = STANDUP_WORK[(day + j) % len(STANDUP_WORK)]
            nxt = STANDUP_WORK[(day + 3 * j + 1) % len(STANDUP_WORK)]
            blocker = STANDUP_BLOCKERS[(day * 7 + j) % len(STANDUP_BLOCKERS)]
            rt.post_message(w.m(f"standup-d{day:02d}-{j}"), w.standups, account,
                            f"Standup: yesterday {work}; today {nxt}; blockers: {blocker}.",
                            midnight - timedelta(days=day) + timedelta(hours=9, minutes=2 * j))
            count += 1
    return len(posts) + count


# --------------------------------------------------------------------------
# Printing
# --------------------------------------------------------------------------


def _print_result(say: _Out, w: World, label: str, result: SearchResult, *, reasons: bool = True) -> None:
    say()
    say(f"  {label}")
    say(f"  -> {len(result.hits)} hit(s); status {result.status}; budget {result.budget_used} used, "
        f"{result.budget_remaining} left; audit event {result.search_event_id}")
    for rank, h in enumerate(result.hits, 1):
        _print_hit(say, w, rank, h, reasons)


def _print_hit(say: _Out, w: World, rank: int, h: SearchHit, reasons: bool) -> None:
    say(f"   #{rank} {h.message_id}  {w.who(h.speaker_id)} ({h.speaker_role})  {_t(h.sent_at)}  "
        f"in {h.conversation_id}")
    for nb in reversed(h.before):
        say(f"         before  {w.who(nb.speaker_id):>6} {_t(nb.sent_at)}: {_short(nb.body, 60)}")
    say.wrap(f">> \"{' '.join(h.body.split())}\"", "      ")
    for nb in h.after:
        say(f"         after   {w.who(nb.speaker_id):>6} {_t(nb.sent_at)}: {_short(nb.body, 60)}")
    if reasons:
        r = h.reasons
        say(f"         score {h.score:.2f} = text {r.text:.2f} + coverage {r.coverage:.2f} + actor {r.actor:.2f}"
            f" + conversation {r.conversation:.2f} + participation {r.participation:.2f}"
            f" + recency {r.recency:.2f} + named_speaker {r.named_speaker:.2f} + session {r.session:.2f}"
            f" + period {r.period:.2f} + tells_time {r.tells_time:.2f}"
            f" + window_coverage {r.window_coverage:.2f} + feedback {r.feedback:.2f}"
            f"   matched: {', '.join(r.matched_terms)}")


EXCLUSIONS = ["speaker", "time", "perspective", "audience", "lineage", "alive", "in_context", "budget"]


def _exclusions(row: dict[str, Any]) -> str:
    parts = [f"{k} {row[f'excluded_{k}']}" for k in EXCLUSIONS if row.get(f"excluded_{k}")]
    return ", ".join(parts) if parts else "none"


def _audit_table(say: _Out, rows: list[dict[str, Any]]) -> None:
    header = (f"  {'searched_at':<15} {'speaker':<9} {'lim':>3} {'hits':>4} {'sel':>4} {'used':>4} {'left':>4} "
              f"{'status':<23} {'digest':<12} excluded (first rule failed)")
    say(header)
    say("  " + "-" * (len(header) - 2))
    for r in sorted(rows, key=lambda r: r["searched_at"]):
        say(f"  {r['searched_at'].astimezone(timezone.utc).strftime('%H:%M:%S.%f')[:12]:<15} {r['speaker']:<9} "
            f"{r['effective_limit']:>3} {r['hit_count']:>4} {r['selected_count']:>4} {r['budget_used']:>4} "
            f"{r['budget_remaining']:>4} {r['status']:<23} {r['query_digest'][:12]:<12} {_exclusions(r)}")


# --------------------------------------------------------------------------
# The turns
# --------------------------------------------------------------------------


def _play(dsn: str, say: _Out, prefix: str) -> None:
    w = World(prefix, datetime.now(timezone.utc).replace(second=0, microsecond=0))
    with _connect(dsn, "history_runtime") as (rconn, r_as), \
            _connect(dsn, "history_searcher") as (sconn, s_as), \
            _connect(dsn, "history_auditor") as (aconn, a_as), \
            _connect(dsn, "history_digest_verifier") as (vconn, v_as):
        rt, auditor, verifier = Runtime(rconn), Auditor(aconn), Auditor(vconn)
        say(f"  connections: runtime as {r_as}, model-side search as {s_as}, auditor as {a_as}, "
            f"digest checks as {v_as}")

        # ---------------------------------------------------------------- world
        say.section("1. The world (loaded through the runtime API, in one transaction)")
        t0 = time.monotonic()
        with rconn.transaction():
            n = load_world(rt, w)
        say(f"  {n} messages in {time.monotonic() - t0:.1f}s. Conversations, members (besides the agent "
            f"'{w.agent}'):")
        say(f"    {w.launch:<36} channel  alice, bob, carol")
        say(f"    {w.standups:<36} channel  alice, bob, carol + 7 teammates ({n - 10} standup posts)")
        say(f"    {w.leads:<36} group    bob, dave            (private: alice and carol are not in it)")
        say(f"    {w.dm_alice:<36} direct   alice")
        say(f"    {w.mail_thread:<36} direct   {w.alice_mail}  (linked to {w.alice} by a verified proof)")

        # ---------------------------------------------------- turn A (earlier)
        say.section("2. An earlier turn: alice asks in her DM; the reply is built on her mail thread")
        run_a = rt.begin_run(w.agent, w.dm_alice, w.alice, w.m("dm-1"))
        res = Search(sconn, run_a).search("vendor quote Atlas hosting", speaker="requester", limit=1)
        _print_result(say, w, 'search("vendor quote Atlas hosting", speaker="requester", limit=1)', res,
                      reasons=False)
        say.wrap(f"The mail account is linked to alice, so its message counts as hers (speaker_role requester) and, "
                 f"the thread being a direct conversation, she may be shown it in her DM.", "  ")
        rt.record_reply(run_a, w.m("dm-1-reply"),
                        "The hosting vendor quoted $40k for year one and $32k on renewal (pending finance sign-off).",
                        w.ago(days=7, hours=1, minutes=58))
        say(f"  record_reply -> {w.m('dm-1-reply')} posted in {w.dm_alice} with lineage "
            f"[{', '.join(h.message_id for h in res.hits)}]; run ended")

        # ------------------------------------------------------- turn B (main)
        say.section("3. The main turn: alice asks the agent in #atlas-launch")
        ask = ("@helper before I email customers: where do we stand on the Atlas launch date, is anything at "
               "risk, and what's the hosting budget?")
        rt.post_message(w.m("launch-7"), w.launch, w.alice, ask, w.ago(minutes=2))
        say(f"  alice: \"{ask}\"")
        run = rt.begin_run(w.agent, w.launch, w.alice, w.m("launch-7"), loaded_message_ids=[w.m("launch-6")])
        say(f"  begin_run -> run token {run}")
        say(f"  audience (default): the channel's open members but the agent: alice, bob, carol")
        search = Search(sconn, run)

        r1 = search.search("Atlas launch date", limit=3)
        _print_result(say, w, 'search("Atlas launch date", limit=3)', r1)

        r2 = search.search("security review risk")
        _print_result(say, w, 'search("security review risk")', r2)
        ev2 = auditor.search_events(event=r2.search_event_id)[0]
        say()
        say(f"  Why only {len(r2.hits)} hit? The audit row of that search (history.search_audit, as {a_as}):")
        say(f"    search_event_id {ev2['search_event_id']}  query_term_count {ev2['query_term_count']}  "
            f"hit_count {ev2['hit_count']}")
        say("    " + "  ".join(f"excluded_{k} {ev2[f'excluded_{k}']}" for k in EXCLUSIONS))
        say.wrap(f"excluded_audience {ev2['excluded_audience']}: a matching message the agent did see failed the "
                 f"audience rule — it is dave's note in {w.leads}, and alice and carol, who will read this reply, "
                 f"were not members. The audit keeps the count, never the text.", "    ")

        r3 = search.search("hosting budget vendor quote")
        _print_result(say, w, 'search("hosting budget vendor quote")', r3)
        ev3 = auditor.search_events(event=r3.search_event_id)[0]
        say(f"    audit: {_exclusions(ev3)}")
        say.wrap("The quote lives in alice's mail thread, her DM question and the agent's DM reply built on it: "
                 "fine for alice alone, not for a channel where bob and carol read (audience). Her question here "
                 "is the run's current message (in_context).", "    ")

        say()
        say("  What the model reads for the first search (to_prompt, max_chars=1100):")
        say()
        for line in to_prompt(r1, max_chars=1100).splitlines():
            say("    | " + line)

        say()
        say("  The tool validates the model's raw arguments before anything reaches the database:")
        for raw in ['{"query": "landing page", "limit": 50}',
                    '{"query": "landing page", "after": "2026-05-01"}',
                    '{"query": "landing page", "requester": "dave"}']:
            say(f"    call_tool({raw})")
            say(f"      -> {call_tool(search, raw)}")
        ok = call_tool(search, {"query": "landing page", "limit": 1})
        say(f"    call_tool({{\"query\": \"landing page\", \"limit\": 1}}) -> status {ok['status']}, "
            f"hits {[h['message_id'] for h in ok['hits']]}")

        say()
        say(f"  The audit rows a DBA sees for this run (history.search_audit, found by the SHA-256 of its token):")
        rows = auditor.search_events(run=run)
        _audit_table(say, rows)
        say()
        say("  One row per returned message (history.search_audit_messages), for the first search:")
        for m in auditor.search_event_messages(r1.search_event_id):
            say(f"    {m['position']:>2} {m['role']:<6} {m['message_id']:<22} of hit {m['hit_message_id']:<18} "
                f"rank {m['hit_rank']}  total {m['total']:.2f}")
        say()
        say("  The query text is stored nowhere; history.verify_query_digest (role history_digest_verifier) tells "
            "a trusted auditor whether a text produced an event:")
        for q in ("security review risk", "launch moves to July"):
            say(f"    verify_query_digest({str(r2.search_event_id)[:8]}…, {q!r}) -> "
                f"{verifier.verify_query_digest(r2.search_event_id, q)}")

        problems = rt.check_delivery(run)
        say()
        say(f"  check_delivery -> {problems or 'nothing blocks delivery'}")
        reply = ("The launch is still planned for the 12th: the landing page is final, and Bob is waiting on "
                 "Dave's re-test of the auth fixes before confirming the date.")
        rt.record_reply(run, w.m("launch-7-reply"), reply, w.ago())
        say(f"  record_reply -> helper: \"{reply}\"")
        say(f"  (posted in {w.launch} with the run's {ok['budget_used']} evidence messages as its lineage)")

        # ---------------------------------------------------- turn C (budget)
        say.section("4. Budget: carol asks about two months of standups; the run's 400-message budget drains")
        rt.post_message(w.m("standup-ask"), w.standups, w.carol,
                        "@helper summarise what everyone worked on over the last two months?", w.ago(minutes=1))
        run_c = rt.begin_run(w.agent, w.standups, w.carol, w.m("standup-ask"))
        search_c = Search(sconn, run_c)
        say(f"  {'search (one work item, one fortnight at a time)':<56} {'hits':>4} {'new':>4} {'used':>5} "
            f"{'left':>5}  status")
        used = 0

        def row(label: str, res: SearchResult) -> None:
            nonlocal used
            say(f"  {label:<56} {len(res.hits):>4} {res.budget_used - used:>4} {res.budget_used:>5} "
                f"{res.budget_remaining:>5}  {res.status}")
            used = res.budget_used

        for i, item in enumerate(DRAIN_QUERIES):
            after, before = w.ago(days=14 * (i % 4 + 1)), w.ago(days=14 * (i % 4))
            res = search_c.search(item, after=after, before=before, limit=20)
            row(f'"{item}", after {after:%b %d}, before {before:%b %d}', res)
            if res.budget_remaining == 0:
                break
        res = search_c.search("standup blockers", limit=20)
        row('"standup blockers" (any time)', res)
        ev = auditor.search_events(event=res.search_event_id)[0]
        say(f"    audit of that last search: {_exclusions(ev)}")
        say.wrap("Messages already in the run's evidence are still returned (they cost nothing again); "
                 "new ones are withheld and counted under excluded_budget.", "    ")
        rt.end_run(run_c)
        say("  end_run")

        # ------------------------------------------------- turn D (delivery)
        say.section("5. Delivery blocked: the identity proof is revoked while the agent is answering")
        rt.post_message(w.m("dm-2"), w.dm_alice, w.alice, "@helper remind me of the Atlas hosting quote?",
                        w.ago(minutes=1))
        run_d = rt.begin_run(w.agent, w.dm_alice, w.alice, w.m("dm-2"))
        res = Search(sconn, run_d).search("Atlas hosting vendor quote", limit=2)
        say(f"  search -> {[h.message_id for h in res.hits]}")
        rt.revoke_proof(w.m("proof-alice-mail"), w.ago())
        say(f"  revoke_proof({w.m('proof-alice-mail')})")
        say(f"  check_delivery -> {[(p.message_id, p.reason) for p in rt.check_delivery(run_d)]}")
        try:
            rt.record_reply(run_d, w.m("dm-2-reply"), "It was $40k for year one.", w.ago())
        except DeliveryBlocked as exc:
            say(f"  record_reply -> DeliveryBlocked [{exc.sqlstate}]: {exc.message}")
            if exc.hint:
                say(f"                  hint: {exc.hint}")
        rt.end_run(run_d)
        say("  end_run (nothing was posted)")

        # ------------------------------------------------- turn E (text analysis)
        say.section("6. What people type: a ticket number, a file name, a Japanese word (docs/text-analysis.md)")
        say.wrap("A ticket is written PROJ-4821 and remembered as 4821; a Japanese sentence has no spaces. "
                 "The english parser alone finds neither: it keeps PROJ and -4821, and the whole sentence "
                 "as one word. The project's analysis indexes identifier parts and CJK bigrams, for "
                 "documents and queries alike.")
        run_e = rt.begin_run(w.agent, w.launch, w.alice, w.m("launch-7"))
        search_e = Search(sconn, run_e)
        for query, message in (("4821", "launch-ticket"), ("session.py", "launch-ticket"), ("会議", "tokyo-1")):
            res = search_e.search(query, limit=3)
            _print_result(say, w, f'search("{query}", limit=3)', res, reasons=False)
            body = next(h.body for h in res.hits if h.message_id == w.m(message))
            parsed = sconn.execute(
                "SELECT to_tsvector('english', %s)::text, to_tsvector('english', %s) @@ plainto_tsquery('english', %s)",
                (body, body, query)).fetchone()
            assert parsed is not None  # a SELECT without FROM returns one row
            english, matches = parsed
            say(f"    english parser alone: {_short(english, 70)} -> "
                f"{'match' if matches else 'no match'} for {query!r}")
        rt.end_run(run_e)
        say("  end_run")


def run_demo(dsn: str | None = None, out: IO[str] | None = None, *, migrate: bool = True) -> int:
    """Run the demo; print to ``out`` (default stdout). Returns 0.

    Without ``dsn``: a throwaway local PostgreSQL is started, migrated, used and
    removed. With ``dsn``: that database is migrated (unless ``migrate=False``)
    and the world is written under a fresh id prefix.
    """
    say = _Out(out if out is not None else sys.stdout)
    started = time.monotonic()
    say("history-search demo")
    if dsn is None:
        from .cluster import ThrowawayCluster
        from .migrations import apply_migrations

        with ThrowawayCluster() as cluster:
            say(f"  throwaway PostgreSQL at {cluster.dsn} (removed at the end)")
            applied = apply_migrations(cluster.dsn)
            say(f"  migrations applied: {len(applied)}")
            _play(cluster.dsn, say, "acme")
        say()
        say(f"done in {time.monotonic() - started:.1f}s; the throwaway server is stopped and removed.")
        return 0
    prefix = f"acme-{secrets.token_hex(2)}"
    say(f"  NOTE: this writes sample data into {_database_name(dsn)} and leaves it there: accounts, "
        f"conversations and messages with ids starting '{prefix}:', their runs, evidence and audit rows. "
        "Use a scratch database.")
    if migrate:
        from .migrations import apply_migrations

        applied = apply_migrations(dsn)
        say(f"  migrations applied: {len(applied)}" if applied else "  database schema up to date")
    _play(dsn, say, prefix)
    say()
    say(f"done in {time.monotonic() - started:.1f}s. The sample data (ids starting '{prefix}:') "
        f"is still in {_database_name(dsn)}.")
    return 0


def _database_name(dsn: str) -> str:
    """'database NAME' for a DSN, without its password."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        name = conninfo_to_dict(dsn).get("dbname")
    except psycopg.Error:
        name = None
    return f"database {name!s}" if name else "the database given"
