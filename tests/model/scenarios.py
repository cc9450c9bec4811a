"""Hypothesis strategies for scenarios: a list of operations (tests/model/ops.py),
every world operation valid when it is applied, over a small vocabulary so that
searches hit.

A ``Scenario`` is plain data, so a shrunk counterexample prints as Python and
can be pasted into an ``@example``.

``scenarios()``        small random worlds (a few conversations, tens of messages),
                       runs, searches, delivery checks, replies, and world changes
                       between them (deletes, edits, leaves, joins, links, revocations);
                       most also write a second tenant (``OTHER_TENANT``) with the
                       same ids, other words and everyone a member of everything,
                       which no run (all in the default tenant) may see
``budget_scenarios()`` a world of 440-560 matching messages and a run that searches
                       until its 400-message budget runs out
"""

from __future__ import annotations

from typing import NamedTuple

from hypothesis import strategies as st

from .ops import (Account, AddMember, Begin, Check, Conversation, Delete, Edit, End, Erase, InTenant, Link, Op, Post,
                  RemoveMember, Reply, Revoke, Search, apply)
from .world import World

VOCAB = ("river", "stone", "lamp", "cloud", "apple", "tiger")  # distinct lexemes under 'english'
OTHER = ("zebra", "the", "and", "of", "x")  # a word nobody writes, stop words, a one-letter word
OPERATORS = ("&", "|", "!", "'", "<->", ":*", "(", ")", "\\", "-")
INFLECTED = ("rivers", "Stones", "LAMP", "clouds")  # the same lexemes as river, stone, lamp, cloud
OTHER_TENANT = "t2"  # the runs are the default tenant's; this one shares its ids


class Scenario(NamedTuple):
    weights: str  # 'default' (the shipped settings) or 'exact' (see tests/model/search.py: exact_rank_key)
    ops: tuple[Op, ...]


@st.composite
def bodies(draw):
    words = draw(st.lists(st.sampled_from(VOCAB), min_size=0 if draw(st.integers(0, 5)) == 0 else 1,
                          max_size=3, unique=True))
    words += draw(st.lists(st.sampled_from(OTHER[1:]), max_size=1))
    if not words:
        words = ["zebra"]
    return " ".join(draw(st.permutations(words)))


@st.composite
def queries(draw):
    kind = draw(st.sampled_from(["words"] * 5 + ["operators", "operators", "nothing", "long"]))
    if kind == "nothing":
        return draw(st.sampled_from(["", "   ", "the and", "& | !", "''"]))
    words = draw(st.lists(st.sampled_from(VOCAB + OTHER[:1] + INFLECTED), min_size=1, max_size=4))
    if kind == "long":
        # past the limits of decisions.md: only the first 32 distinct terms count, over 4000 characters is HS001
        filler = draw(st.sampled_from(["terms", "chars"]))
        head = draw(st.lists(st.sampled_from(VOCAB), max_size=2))
        if filler == "terms":
            pad = [f"w{i}" for i in range(draw(st.integers(28, 34)))]
        else:
            pad = ["zebra"] * draw(st.integers(660, 670))  # 6 characters each: around the 4000 maximum
        return " ".join(head + pad + words)
    if kind == "operators":
        out = []
        for w in words:
            out.append(w)
            out.append(draw(st.sampled_from(OPERATORS)))
        return "".join(out)
    return " ".join(words)


minutes = st.integers(min_value=0, max_value=120)


class _Gen:
    """Builds a valid sequence of operations against a model world of its own."""

    def __init__(self, draw):
        self.draw = draw
        self.world = World()
        self.ops: list[Op] = []
        self.persons: list[str] = []
        self.agents: list[str] = []
        self.message_ids: list[str] = []  # messages certainly posted
        self.open_runs: list[str] = []  # runs certainly open
        self.closed_runs: list[str] = []  # ended, or perhaps ended by a reply
        self.n_messages = 0
        self.n_runs = 0
        self.n_proofs = 0
        self.n_extra_conversations = 0

    def emit(self, op: Op) -> None:
        self.ops.append(op)
        if not isinstance(op, (Search, Check, Reply)):
            apply(self.world, op)

    # --- world operations --------------------------------------------------

    def accounts(self, n_persons: int, n_agents: int) -> None:
        for i in range(n_persons):
            self.persons.append(f"p{i}")
            self.emit(Account(f"p{i}", "person"))
        for i in range(n_agents):
            self.agents.append(f"a{i}")
            self.emit(Account(f"a{i}", "agent"))

    def can_join(self, conv: str, acc: str) -> bool:
        if self.world.open_membership(conv, acc) is not None:
            return False
        if self.world.conversations[conv] == "direct" and len(self.world.parties(conv) | {acc}) > 2:
            return False
        return True

    def join(self, conv: str, acc: str, since: int) -> None:
        from .ops import at
        last = self.world.last_until(conv, acc)
        if last is not None and at(since) < last:
            since = int((last - at(0)).total_seconds() // 60)
        self.emit(AddMember(conv, acc, since))

    def leave(self, conv: str, acc: str, until: int) -> None:
        from .ops import at
        m = self.world.open_membership(conv, acc)
        if at(until) < m.since:
            until = int((m.since - at(0)).total_seconds() // 60)
        self.emit(RemoveMember(conv, acc, until))

    def memberships(self, conv: str, accounts: list[str]) -> None:
        for acc in accounts:
            if not self.can_join(conv, acc):
                continue
            if self.draw(st.integers(0, 2)):
                times = [self.draw(st.integers(0, 20))]  # the common case: joined early, still there
            else:
                times = sorted(self.draw(st.lists(minutes, min_size=1, max_size=4)))
            for i, t in enumerate(times):
                if i % 2 == 0:
                    self.join(conv, acc, t)
                else:
                    self.leave(conv, acc, t)

    def post(self, body: str | None = None, sent_at: int | None = None, conv: str | None = None,
             author: str | None = None, sources: tuple[str, ...] | None = None) -> None:
        draw = self.draw
        mid = f"m{self.n_messages:02d}"
        self.n_messages += 1
        conv = conv or draw(st.sampled_from(sorted(self.world.conversations)))
        if author is None:
            members = sorted(self.world.parties(conv))
            author = draw(st.sampled_from(members)) if members and draw(st.integers(0, 4)) else \
                draw(st.sampled_from(self.persons + self.agents))
        if sources is None:
            sources = ()
            if self.message_ids and draw(st.integers(0, 3)) == 0:
                sources = tuple(draw(st.lists(st.sampled_from(self.message_ids), min_size=1, max_size=2,
                                              unique=True)))
        self.emit(Post(mid, conv, author, draw(bodies()) if body is None else body,
                       draw(minutes) if sent_at is None else sent_at, sources))
        self.message_ids.append(mid)

    def live_messages(self) -> list[str]:
        return [m for m in self.message_ids if self.world.messages[m].alive]

    def link(self) -> None:
        a, b = self.draw(st.lists(st.sampled_from(self.persons), min_size=2, max_size=2, unique=True))
        self.emit(Link(f"k{self.n_proofs}", a, b, self.draw(minutes)))
        self.n_proofs += 1

    def unrevoked(self) -> list[str]:
        return [p for p, proof in self.world.proofs.items() if not proof.revoked]

    def membership_rows(self, account: str) -> int:
        return sum(len(ms) for (_conv, acc), ms in self.world.memberships.items() if acc == account)

    def outsider_audience(self) -> tuple[str, ...] | None:
        """Three people: two who were in some group or channel, and one never in it who has more
        memberships than either (fresh conversations of its own are added until it has). The SQL
        starts its audience check from the accounts with the fewest memberships, so only such an
        outsider tests that *every* audience account, not just some, can read a message
        (docs/testing.md, planted fault (a)). None when the world has no such pair and outsider."""
        draw = self.draw
        choices = []
        for conv in sorted(self.world.conversations):
            if self.world.conversations[conv] == "direct":
                continue
            inside = [p for p in self.persons if self.world.ever_member(p, conv)]
            outside = [p for p in self.persons if not self.world.ever_member(p, conv)]
            if len(inside) >= 2 and outside:
                choices.append((inside, outside))
        if not choices:
            return None
        inside, outside = draw(st.sampled_from(choices))
        members = draw(st.lists(st.sampled_from(inside), min_size=2, max_size=2, unique=True))
        outsider = draw(st.sampled_from(outside))
        while self.membership_rows(outsider) <= max(self.membership_rows(m) for m in members):
            conv = f"x{self.n_extra_conversations}"
            self.n_extra_conversations += 1
            self.emit(Conversation(conv, "group"))
            self.emit(AddMember(conv, outsider, 0))
        return tuple(draw(st.permutations(members + [outsider])))

    # --- another tenant ----------------------------------------------------

    def other(self, op) -> None:
        self.emit(InTenant(OTHER_TENANT, op))

    def other_world(self) -> World | None:
        return self.world.elsewhere.get(OTHER_TENANT)

    def elsewhere(self) -> None:
        """A second tenant with the default tenant's ids (accounts, conversations,
        messages, a proof), other kinds and words, where everyone is a member of
        everything from the start: what leaks from it shows in a default run's
        hits, scores, counts or delivery checks."""
        draw = self.draw
        accounts = {a: (kind if draw(st.integers(0, 4)) else ("agent" if kind == "person" else "person"))
                    for a, kind in sorted(self.world.accounts.items())}
        accounts["q0"] = "person"  # an account only this tenant has
        for acc, kind in accounts.items():
            self.other(Account(acc, kind))
        convs = sorted(self.world.conversations) + ["c9"]
        for conv in convs:
            self.other(Conversation(conv, "group"))
            for acc in accounts:
                self.other(AddMember(conv, acc, 0))
        for _ in range(draw(st.integers(1, max(1, self.n_messages + 2)))):
            self.other_post()
        persons = [a for a, kind in accounts.items() if kind == "person"]
        if len(persons) >= 2:
            a, b = draw(st.lists(st.sampled_from(persons), min_size=2, max_size=2, unique=True))
            self.other(Link("k0", a, b, draw(minutes)))  # the id of the default tenant's first proof

    def other_post(self) -> None:
        draw, w = self.draw, self.other_world()
        ids = list(w.messages)
        sources = (draw(st.sampled_from(ids)),) if ids and draw(st.integers(0, 3)) == 0 else ()
        self.other(Post(f"m{len(ids):02d}", draw(st.sampled_from(sorted(w.conversations))),
                        draw(st.sampled_from(sorted(w.accounts))), draw(bodies()), draw(minutes), sources))

    def elsewhere_change(self) -> None:
        draw, w = self.draw, self.other_world()
        live = [m for m, msg in w.messages.items() if msg.alive]
        kind = draw(st.sampled_from(["post", "edit", "delete", "erase"]))
        if kind == "post" or not live:
            self.other_post()
        elif kind == "edit":
            self.other(Edit(draw(st.sampled_from(live)), draw(bodies()), draw(minutes)))
        elif kind == "delete":
            self.other(Delete(draw(st.sampled_from(live)), draw(minutes)))
        else:
            self.other(Erase(draw(st.sampled_from(sorted(w.accounts))), draw(minutes)))

    # --- runs --------------------------------------------------------------

    def begin(self) -> str:
        draw = self.draw
        name = f"r{self.n_runs}"
        self.n_runs += 1
        agent = draw(st.sampled_from(self.agents))
        mine = sorted(c for c in self.world.conversations if self.world.ever_member(agent, c))
        conv = draw(st.sampled_from(mine if mine and draw(st.integers(0, 3)) else sorted(self.world.conversations)))
        requester = draw(st.sampled_from(self.persons))
        current = draw(st.sampled_from(self.message_ids))
        loaded = tuple(draw(st.lists(st.sampled_from(self.message_ids), max_size=3, unique=True)))
        audience = None
        kind = draw(st.integers(0, 5))
        if kind == 0:
            audience = self.outsider_audience()
        if kind in (1, 2) or (kind == 0 and audience is None):
            audience = tuple(draw(st.lists(st.sampled_from(self.persons + self.agents), max_size=3, unique=True)))
        self.emit(Begin(name, agent, conv, requester, current, loaded, audience))
        self.open_runs.append(name)
        return name

    def search(self, run: str, limit=None) -> None:
        draw = self.draw
        after = before = None
        if draw(st.integers(0, 3)) == 0:
            after = draw(minutes)
        if draw(st.integers(0, 3)) == 0:
            before = draw(minutes)
            if after is not None and after > before:
                after, before = before, after
        speaker = draw(st.sampled_from(["anyone", "anyone", "requester", "you", None] * 6 + ["nobody"]))  # HS001
        if limit is None:
            limit = draw(st.sampled_from([8, 8, None, 1, 2, 3, 25] * 3 + [0]))  # 0: HS001
        self.emit(Search(run, draw(queries()), speaker, after, before, limit))


@st.composite
def scenarios(draw, max_steps: int = 14) -> Scenario:
    g = _Gen(draw)
    g.accounts(draw(st.integers(2, 4)), draw(st.integers(1, 2)))
    for i in range(draw(st.integers(1, 3))):
        g.emit(Conversation(f"c{i}", draw(st.sampled_from(["direct", "group", "channel"]))))
    for conv in sorted(g.world.conversations):
        if g.world.conversations[conv] == "direct":
            first = draw(st.sampled_from(g.agents)) if draw(st.integers(0, 3)) else draw(st.sampled_from(g.persons))
            second = draw(st.sampled_from([p for p in g.persons if p != first]))
            members = [first, second]
        else:
            members = [a for a in g.agents if draw(st.integers(0, 5))]  # each agent a member of most
            members += [p for p in g.persons if draw(st.booleans())]
        g.memberships(conv, members)
    for _ in range(draw(st.integers(2, 14))):
        g.post()
    for _ in range(draw(st.integers(0, 2))):
        g.link()
    if draw(st.integers(0, 3)):
        g.elsewhere()

    first = g.begin()
    g.search(first)
    g.search(first)
    for _ in range(draw(st.integers(0, max_steps))):
        choice = draw(st.sampled_from(["search", "search", "search", "begin", "check", "check", "reply", "end",
                                       "post", "edit", "delete", "link", "revoke", "join", "join", "leave",
                                       "erase", "elsewhere"]))
        if choice == "search" and (g.open_runs or g.closed_runs):
            pool = g.open_runs if g.open_runs and draw(st.integers(0, 7)) else g.open_runs + g.closed_runs
            g.search(draw(st.sampled_from(pool)))
        elif choice == "begin":
            g.begin()
        elif choice == "check" and (g.open_runs or g.closed_runs):
            g.emit(Check(draw(st.sampled_from(g.open_runs + g.closed_runs))))
        elif choice == "reply" and g.open_runs:
            run = draw(st.sampled_from(g.open_runs))
            g.emit(Reply(run, f"{run}reply", "reply " + draw(bodies()), draw(minutes)))
            g.open_runs.remove(run)
            g.closed_runs.append(run)  # perhaps: the reply may be blocked
        elif choice == "end" and g.open_runs:
            run = draw(st.sampled_from(g.open_runs))
            g.emit(End(run))
            g.open_runs.remove(run)
            g.closed_runs.append(run)
        elif choice == "post":
            g.post()
        elif choice == "edit" and g.live_messages():
            g.emit(Edit(draw(st.sampled_from(g.live_messages())), draw(bodies()), draw(minutes)))
        elif choice == "delete" and g.live_messages():
            g.emit(Delete(draw(st.sampled_from(g.live_messages())), draw(minutes)))
        elif choice == "elsewhere" and g.other_world() is not None:
            g.elsewhere_change()
        elif choice == "erase" and g.persons:
            g.emit(Erase(draw(st.sampled_from(g.persons)), draw(minutes)))
        elif choice == "link" and len(g.persons) >= 2:
            g.link()
        elif choice == "revoke" and g.unrevoked():
            g.emit(Revoke(draw(st.sampled_from(g.unrevoked())), draw(minutes)))
        elif choice == "join":
            conv = draw(st.sampled_from(sorted(g.world.conversations)))
            acc = draw(st.sampled_from(g.persons + g.agents))
            if g.can_join(conv, acc):
                g.join(conv, acc, draw(minutes))
        elif choice == "leave":
            open_ = sorted((c, a) for (c, a), ms in g.world.memberships.items() if any(m.until is None for m in ms))
            if open_:
                conv, acc = draw(st.sampled_from(open_))
                g.leave(conv, acc, draw(minutes))
    return Scenario(draw(st.sampled_from(["default", "exact"])), tuple(g.ops))


@st.composite
def budget_scenarios(draw) -> Scenario:
    """Hundreds of matching messages; searches of limit 20 until the budget is spent."""
    g = _Gen(draw)
    g.accounts(3, 1)
    g.emit(Conversation("c0", "group"))
    g.emit(Conversation("c1", "channel"))
    g.emit(Conversation("c2", "direct"))
    for conv in ("c0", "c1", "c2"):
        g.join(conv, "a0", 0)
        g.join(conv, "p0", 0)
    g.memberships("c0", ["p1", "p2"])
    g.memberships("c1", ["p1"])
    if draw(st.booleans()):
        g.link()
    n = draw(st.integers(440, 560))
    convs = draw(st.lists(st.sampled_from(["c0", "c1", "c2"]), min_size=3, max_size=3))
    for i in range(n):
        words = (VOCAB[i % len(VOCAB)], VOCAB[(i * 7 + 1) % len(VOCAB)], VOCAB[(i * 5 + 2) % len(VOCAB)])
        g.post(body=" ".join(dict.fromkeys(words)), sent_at=(i * 37) % 600, conv=convs[i % 3],
               author=g.persons[i % 3] if i % 5 else "a0", sources=(f"m{i - 3:02d}",) if i % 41 == 40 else ())
    run = "r0"
    g.emit(Begin(run, "a0", draw(st.sampled_from(["c0", "c1", "c2"])), draw(st.sampled_from(g.persons)), "m00",
                 tuple(draw(st.lists(st.sampled_from(g.message_ids), max_size=5, unique=True))),
                 draw(st.sampled_from([(), ("p0",), (), ("p0",), ("p0", "p1"), None]))))
    offset = draw(st.integers(0, 19))
    for i in range(draw(st.integers(20, 30))):
        words = draw(st.lists(st.sampled_from(VOCAB), min_size=3, max_size=5, unique=True))
        start = ((offset + i) % 20) * 30  # windows walking through the whole history
        g.emit(Search(run, " ".join(words), draw(st.sampled_from(["anyone"] * 5 + ["requester"])),
                      start, start + draw(st.sampled_from([30, 30, 60, 600])), 20))
        if draw(st.integers(0, 4)) == 0:
            g.emit(Delete(draw(st.sampled_from(g.live_messages())), 0))
    g.emit(Check(run))
    return Scenario("exact", tuple(g.ops))
