"""Seeded benchmark world and its bulk load.

The world (accounts, agents, conversations, membership intervals, identity
links, messages with lineage, edits and deletes) is a pure function of
``(messages, seed)``; only its time anchor moves with the day it is built, so
that every timestamp is in the past of the database clock (default audiences
are the destination's open memberships *now*).

Text: ``wordfreq`` is not installable here, so the vocabulary is generated
deterministically from the seed: pronounceable pseudo-words built from
consonant-vowel syllables ending in ``a``/``o``/``u`` (the English Snowball
stemmer leaves them alone, so a word is its own lexeme), drawn with a Zipf
law (weight ``1 / rank**1.07``). Document frequencies are counted while the
bodies are generated, and the benchmark picks its query terms from them.

Bulk load: one transaction, as a superuser, COPY straight into the canonical
tables with explicit keys, writing exactly the rows ``post_message``,
``edit_message``, ``delete_message``, ``link_identity`` and ``add_member`` would
have written (see docs/benchmarks.md, "Why the bulk path is equivalent").
Secondary indexes of the loaded tables are dropped and recreated from their
own ``pg_get_indexdef`` inside the transaction; foreign-key triggers are
skipped (``session_replication_role = replica``) and the references are
checked once, set-wise, before commit. Worker processes write the messages'
and events' lines in chunks; the text is still that of one sequential
generator (see ``_chunk_states``).
"""

from __future__ import annotations

import bisect
import datetime as dt
import math
import multiprocessing
import os
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Iterable, Iterator

UTC = dt.timezone.utc

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aiou"
_FINAL = "aou"


def make_vocabulary(size: int, seed: int) -> list[str]:
    """``size`` distinct pseudo-words, the same for the same seed."""
    rng = random.Random(f"vocab-{seed}")
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < size:
        # Frequent words short, rare words long, as in natural text.
        n = 2 if len(words) < 60 else (3 if len(words) < 3000 else 4)
        syl = [rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(n - 1)]
        syl.append(rng.choice(_CONSONANTS) + rng.choice(_FINAL))
        w = "".join(syl)
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


@dataclass
class Conversation:
    key: int
    kind: str
    start: float
    weight: float
    # (account_key, since, until-or-None) intervals
    members: list[tuple[int, float, float | None]] = field(default_factory=list)


@dataclass
class World:
    seed: int
    n_messages: int
    anchor: float  # epoch seconds; every time is before it
    vocabulary: list[str]
    n_persons: int
    n_agents: int
    # accounts: key -> (id, kind, component_key)
    accounts: list[tuple[int, str, str, int]]
    proofs: list[tuple[int, str, int, int, float]]
    conversations: list[Conversation]
    big_channels: list[int]
    omniscient_agent: int
    stats: dict[str, Any] = field(default_factory=dict)
    # filled by load(): lexeme -> number of live messages containing it
    doc_freq: dict[str, int] = field(default_factory=dict)

    def account_id(self, key: int) -> str:
        return self.accounts[key - 1][1]


def _clamp(x: float, lo: float, hi: float) -> int:
    return int(max(lo, min(hi, x)))


def build_world(n_messages: int, seed: int = 1, anchor: float | None = None) -> World:
    """The accounts, links, conversations and memberships of a world of ``n_messages``."""
    rng = random.Random(f"world-{seed}-{n_messages}")
    if anchor is None:
        today = dt.datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        anchor = (today - dt.timedelta(days=1)).timestamp()
    span = 365 * 86400.0
    t0 = anchor - span

    n_persons = _clamp(n_messages / 250, 40, 40000)
    n_agents = _clamp(n_messages / 2500, 5, 800)
    n_conv = _clamp(n_messages / 40, 12, 250000)
    vocab = make_vocabulary(_clamp(n_messages / 5, 2000, 200000), seed)

    accounts: list[tuple[int, str, str, int]] = []
    for i in range(n_persons):
        accounts.append((i + 1, f"person-{i + 1:06d}", "person", i + 1))
    for j in range(n_agents):
        k = n_persons + j + 1
        accounts.append((k, f"agent-{j + 1:04d}", "agent", k))
    persons = list(range(1, n_persons + 1))
    agents = list(range(n_persons + 1, n_persons + n_agents + 1))
    omniscient = agents[0]

    # Identity links: ~4% of persons linked to another (some chains of three).
    parent = {p: p for p in persons}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    proofs = []
    for n in range(max(1, n_persons // 25)):
        a, b = rng.sample(persons, 2)
        verified = t0 + rng.random() * span
        proofs.append((n + 1, f"proof-{n + 1:06d}", a, b, verified))
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    comp: dict[int, int] = {}
    for p in persons:
        r = find(p)
        comp.setdefault(r, p)
        comp[r] = min(comp[r], p)
    accounts = [(k, i, kind, comp[find(k)] if kind == "person" else k) for (k, i, kind, _) in accounts]

    # Agents are not equally busy: a Zipf law over agents, plus one agent
    # that is in every conversation (the "everything" visible set).
    agent_weights = [1.0 / (r + 1) ** 0.9 for r in range(len(agents) - 1)]
    agent_cum = list(_cumulative(agent_weights))

    def pick_agent() -> int:
        return agents[1 + bisect.bisect(agent_cum, rng.random() * agent_cum[-1])] if len(agents) > 1 else omniscient

    def interval(start: float) -> list[tuple[float, float | None]]:
        since = start + (rng.random() ** 3) * (anchor - start) * 0.5
        r = rng.random()
        if r < 0.85:
            return [(since, None)]
        until = since + rng.random() * (anchor - since) * 0.8
        if r < 0.95:
            return [(since, until)]
        back = until + rng.random() * (anchor - until) * 0.8
        return [(since, until), (back, None)]

    conversations: list[Conversation] = []
    n_big = 3 if n_messages >= 3000 else 1
    for c in range(n_conv):
        key = c + 1
        if c < n_big:
            conv = Conversation(key, "channel", t0 + rng.random() * 86400 * 10, 0.0)
            n_members = min(n_persons, max(30, n_persons // 3))
            people = rng.sample(persons, n_members)
            bots = rng.sample(agents[1:], max(1, len(agents[1:]) // 3)) if len(agents) > 1 else []
        else:
            draw = rng.random()
            kind = "direct" if draw < 0.6 else ("group" if draw < 0.9 else "channel")
            conv = Conversation(key, kind, t0 + rng.random() * span * 0.9, rng.paretovariate(1.3))
            if kind == "direct":
                people = rng.sample(persons, 1 if rng.random() < 0.8 else 2)
                bots = [pick_agent()] if len(people) == 1 else []
            elif kind == "group":
                people = rng.sample(persons, min(n_persons, rng.randint(3, 8)))
                bots = list({pick_agent() for _ in range(rng.randint(1, 2))})
            else:
                people = rng.sample(persons, min(n_persons, rng.randint(10, 200)))
                bots = list({pick_agent() for _ in range(rng.randint(1, 3))})
        founder = people[0]
        conv.members.append((founder, conv.start, None))
        for p in people[1:] + [b for b in bots if b != omniscient]:
            for since, until in (interval(conv.start) if conv.kind != "direct" else [(conv.start, None)]):
                conv.members.append((p, since, until))
        conv.members.append((omniscient, conv.start, None))
        conversations.append(conv)

    # Big channels carry ~30% of the messages, the rest by Pareto weight.
    small_total = sum(c.weight for c in conversations[n_big:]) or 1.0
    for small in conversations[n_big:]:
        small.weight = 0.7 * small.weight / small_total
    for big in conversations[:n_big]:
        big.weight = 0.3 / n_big
    w = World(seed, n_messages, anchor, vocab, n_persons, n_agents, accounts, proofs,
              conversations, list(range(1, n_big + 1)), omniscient)
    w.stats = {
        "persons": n_persons, "agents": n_agents, "conversations": n_conv,
        "big_channels": n_big, "identity_proofs": len(proofs),
        "memberships": sum(len(c.members) for c in conversations),
        "vocabulary": len(vocab),
    }
    return w


def _cumulative(weights: Iterable[float]) -> Iterable[float]:
    s = 0.0
    for x in weights:
        s += x
        yield s


def _ts(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, UTC).isoformat(sep=" ")


@dataclass
class MessagePlan:
    """Per-message metadata, in global time order (message_key = index + 1)."""
    conv: list[int]
    author: list[int]
    sent: list[float]
    edited: dict[int, float]      # message_key -> occurred_at of its edit
    deleted: dict[int, float]     # message_key -> occurred_at of its deletion
    sources: dict[int, list[int]]  # message_key -> direct sources
    ancestors: dict[int, set[int]]  # closure, for messages with lineage


def plan_messages(world: World) -> MessagePlan:
    rng = random.Random(f"messages-{world.seed}-{world.n_messages}")
    convs = world.conversations
    cum = list(_cumulative(c.weight for c in convs))
    draws: list[tuple[float, int, int]] = []
    for _ in range(world.n_messages):
        c = convs[min(len(convs) - 1, bisect.bisect(cum, rng.random() * cum[-1]))]
        t = c.start + rng.random() * (world.anchor - 60 - c.start)
        writer = c.members[0][0]
        for _try in range(6):
            a, since, until = c.members[rng.randrange(len(c.members))]
            if since <= t and (until is None or t < until):
                writer = a
                break
        draws.append((round(t, 3), c.key, writer))
    draws.sort()
    conv = [d[1] for d in draws]
    author = [d[2] for d in draws]
    sent = [d[0] for d in draws]
    edited: dict[int, float] = {}
    deleted: dict[int, float] = {}
    sources: dict[int, list[int]] = {}
    ancestors: dict[int, set[int]] = {}
    n = len(sent)
    for i in range(n):
        key = i + 1
        r = rng.random()
        if r < 0.03:
            edited[key] = sent[i] + rng.random() * (world.anchor - sent[i]) * 0.01
        if rng.random() < 0.01:
            deleted[key] = max(sent[i], edited.get(key, sent[i])) + rng.random() * (world.anchor - sent[i]) * 0.01
        # ~1.5% derive from 1-2 recent earlier messages (forwards, summaries);
        # derived messages are themselves sources sometimes: chains form.
        if i > 10 and rng.random() < 0.015:
            srcs = sorted({rng.randrange(max(1, i - 5000), i) + 1 for _ in range(rng.randint(1, 2))})
            sources[key] = srcs
            anc: set[int] = set(srcs)
            for s in srcs:
                anc |= ancestors.get(s, set())
            ancestors[key] = anc
    return MessagePlan(conv, author, sent, edited, deleted, sources, ancestors)


def _escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


class _Progress:
    def __init__(self, out: IO[str] | None, total: int, label: str):
        self.out, self.total, self.label = out, max(1, total), label
        self.start = time.monotonic()
        self.last = -1

    def update(self, done: int) -> None:
        pct = int(100 * done / self.total)
        if self.out is not None and pct // 5 != self.last // 5:
            self.last = pct
            bar = "#" * (pct // 5) + "." * (20 - pct // 5)
            self.out.write(f"\r  {self.label:<24} [{bar}] {pct:3d}% {time.monotonic() - self.start:6.1f}s")
            self.out.flush()

    def done(self) -> None:
        if self.out is not None:
            self.update(self.total)
            self.out.write("\n")
            self.out.flush()


# Tables the bulk path writes, in dependency order.
LOADED_TABLES = [
    "accounts", "conversations", "memberships", "identity_proofs", "messages", "message_events",
    "message_sources", "message_lineage", "conversation_authors", "message_search_documents",
]
_LOADED_TABLE_LIST = ", ".join(f"history.{table}" for table in LOADED_TABLES)


def _copy(cur: Any, table: str, columns: str, rows: Iterable[str], total: int, out: IO[str] | None) -> None:
    """COPY ``rows`` (one line each) into ``history.<table>``."""
    def blocks() -> Iterator[tuple[str, int]]:
        buf: list[str] = []
        for line in rows:
            buf.append(line)
            if len(buf) == 20000:
                yield "".join(buf), len(buf)
                buf = []
        yield "".join(buf), len(buf)
    _copy_blocks(cur, table, columns, blocks(), total, out)


def _copy_blocks(cur: Any, table: str, columns: str, blocks: Iterable[tuple[str, int]], total: int,
                 out: IO[str] | None) -> None:
    """COPY ``blocks`` (each a text of lines and its line count) into ``history.<table>``."""
    prog = _Progress(out, total, table)
    n = 0
    with cur.copy(f"COPY history.{table} ({columns}) FROM STDIN") as cp:
        for text, lines in blocks:
            cp.write(text)
            n += lines
            prog.update(n)
    prog.done()


# ------------------------------------------------- message rows, in parallel
# At 10M messages, generating the messages' and events' lines in Python was
# the largest part of the bulk load, and one process did it. Worker processes
# now generate them in chunks of _CHUNK messages. The bodies are still those
# of one sequential generator, so a world's corpus does not depend on the
# chunking or the number of processes: a first pass makes exactly the draws
# each body makes, without building its words, and records the generator's
# state at the start of each chunk (tests/test_bench.py checks the equality).
_CHUNK = 100_000


@dataclass
class _MessageRows:
    """What the workers read; inherited through fork, never pickled."""
    plan: MessagePlan
    vocab: list[str]
    cum: list[float]
    body_words: tuple[int, int]
    current_event: dict[int, int]  # edited or deleted message -> its latest event's key
    # Keys of one copy of the world, for the copies of a load with several
    # tenants (copy t adds t times these to every key of its kind).
    copy_accounts: int = 0
    copy_conversations: int = 0
    copy_events: int = 0


_ROWS: _MessageRows | None = None  # set while a load's workers run


def _shared_rows() -> _MessageRows:
    assert _ROWS is not None, "only inside _RowWorkers"
    return _ROWS


def _draw_body(rng: random.Random, rows: _MessageRows) -> tuple[str, set[str]]:
    words = rng.choices(rows.vocab, cum_weights=rows.cum, k=rng.randint(*rows.body_words))
    return " ".join(words), set(words)


def _skip_body(rng: random.Random, body_words: tuple[int, int]) -> None:
    # The draws of _draw_body: randint's, then one random() per word, which
    # takes two of the generator's 32-bit words, as getrandbits(64) does.
    rng.getrandbits(64 * rng.randint(*body_words))


def _chunk_states(task: tuple[str, int]) -> list[tuple[Any, ...]]:
    """The state of the body generator seeded ``seed`` at the first message of each chunk."""
    seed, chunk = task
    rows = _shared_rows()
    rng = random.Random(seed)
    states = []
    edited = rows.plan.edited
    for i in range(len(rows.plan.sent)):
        if i % chunk == 0:
            states.append(rng.getstate())
        _skip_body(rng, rows.body_words)
        if i + 1 in edited:
            _skip_body(rng, rows.body_words)
    return states


def _offsets(rows: _MessageRows, copy: int, tenant: int) -> tuple[int, int, int, int, str]:
    """Key offsets (accounts, conversations, messages, events) of a copy and its tenant_key column."""
    return (copy * rows.copy_accounts, copy * rows.copy_conversations, copy * len(rows.plan.sent),
            copy * rows.copy_events, f"{tenant}\t")


def _message_block(task: tuple[Any, ...]) -> tuple[str, int]:
    start, stop, copy, tenant = (*task, 0, 1)[:4]
    rows = _shared_rows()
    plan, current = rows.plan, rows.current_event
    ao, co, mo, eo, tk = _offsets(rows, copy, tenant)
    return "".join(f"{tk}{mo + i + 1}\tmsg-{i + 1:09d}\t{co + plan.conv[i]}\t{ao + plan.author[i]}"
                   f"\t{_ts(plan.sent[i])}\t{eo + current.get(i + 1, i + 1)}\n"
                   for i in range(start, stop)), stop - start


def _event_block(task: tuple[Any, ...]) -> tuple[str, int, dict[int, str], Counter[str]]:
    """The created events of messages start..stop-1 (of copy ``copy`` of the
    world, in tenant ``tenant``), their edits' bodies, and the document
    frequencies of their live bodies."""
    start, stop, state, copy, tenant = (*task, 0, 1)[:5]
    rows = _shared_rows()
    plan = rows.plan
    _, _, mo, eo, tk = _offsets(rows, copy, tenant)
    rng = random.Random()
    rng.setstate(state)
    lines = []
    edit_bodies: dict[int, str] = {}
    live_words: Counter[str] = Counter()
    for i in range(start, stop):
        m = i + 1
        text, words = _draw_body(rng, rows)
        if m in plan.edited:
            edit_bodies[m], words = _draw_body(rng, rows)
        if m not in plan.deleted:
            live_words.update(words)
        lines.append(f"{tk}{eo + m}\t{mo + m}\tcreated\t{_escape(text)}\t{_ts(plan.sent[i])}\n")
    return "".join(lines), stop - start, edit_bodies, live_words


class _RowWorkers:
    """A pool of forked processes running _message_block and _event_block.

    Fork it before opening any connection: a child must not inherit one.
    """

    def __init__(self, rows: _MessageRows, processes: int):
        global _ROWS
        _ROWS = rows
        self.pool = multiprocessing.get_context("fork").Pool(processes) if processes > 1 else None

    def start(self, fn: Callable[[Any], Any], task: Any) -> Callable[[], Any]:
        """Start ``fn(task)`` in a worker; returns the function that waits for its result."""
        if self.pool is None:
            result = fn(task)
            return lambda: result
        return self.pool.apply_async(fn, (task,)).get

    def imap(self, fn: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        """``fn`` over ``tasks``, results in the tasks' order."""
        return self.pool.imap(fn, tasks) if self.pool is not None else map(fn, tasks)

    def __enter__(self) -> "_RowWorkers":
        return self

    def __exit__(self, *exc: object) -> None:
        global _ROWS
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
        _ROWS = None


def tenant_ids(tenants: int) -> list[str]:
    """The tenants a load of ``tenants`` copies writes: the built-in one alone, or tenant-001, tenant-002, ..."""
    return ["default"] if tenants == 1 else [f"tenant-{t + 1:03d}" for t in range(tenants)]


def load(dsn: str, world: World, *, out: IO[str] | None = sys.stderr,
         body_words: tuple[int, int] = (4, 24), tenants: int = 1) -> dict[str, Any]:
    """Bulk-load ``world`` into an empty migrated database; returns timings and counts.

    With ``tenants`` > 1 the world is loaded that many times, each copy in its
    own tenant (``tenant_ids``) with its own keys: each tenant has the same
    accounts, conversations and messages by id, and nothing in common with
    another. (A Citus coordinator is loaded so before ``distribute``, while
    its tables are still local.)
    """
    import psycopg

    started = time.monotonic()
    plan = plan_messages(world)
    n = len(plan.sent)
    n_events = n + len(plan.edited) + len(plan.deleted)
    # Events: created events take keys 1..n (key = message key); edits
    # then deletes follow, so each message's latest event has its largest key.
    edit_keys = {m: n + i + 1 for i, m in enumerate(sorted(plan.edited))}
    delete_keys = {m: n + len(edit_keys) + i + 1 for i, m in enumerate(sorted(plan.deleted))}
    vocab = world.vocabulary
    rows = _MessageRows(plan, vocab, list(_cumulative(1.0 / (r + 1) ** 1.07 for r in range(len(vocab)))),
                        body_words, {**edit_keys, **delete_keys},
                        len(world.accounts), len(world.conversations), n_events)
    t_plan = time.monotonic() - started
    doc_freq: Counter[str] = Counter()

    # The row workers fork before the connection opens (see _RowWorkers).
    with _RowWorkers(rows, min(2, os.cpu_count() or 1)) as row_workers, \
            psycopg.connect(dsn, autocommit=False) as conn, conn.cursor() as cursor:
        cur: Any = cursor
        # A worker finds the body generator's chunk states while the world's tables load.
        chunk_states = row_workers.start(_chunk_states, (f"bodies-{world.seed}-{world.n_messages}", _CHUNK))
        cur.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        if not cur.fetchone()[0]:
            raise RuntimeError("the bulk load needs a superuser connection")
        cur.execute("SELECT count(*) FROM history.messages")
        if cur.fetchone()[0]:
            raise RuntimeError("the bulk load needs an empty database (history.messages has rows)")
        keys = []
        for tenant in tenant_ids(tenants):
            cur.execute("INSERT INTO history.tenants (tenant_id) VALUES (%s) ON CONFLICT (tenant_id) DO NOTHING",
                        (tenant,))
            keys.append(cur.execute("SELECT tenant_key FROM history.tenants WHERE tenant_id = %s",
                                    (tenant,)).fetchone()[0])
        copies = list(enumerate(keys))
        cur.execute("SET LOCAL maintenance_work_mem = '512MB'")
        cur.execute("SET LOCAL work_mem = '256MB'")  # the projection's sorts, the checks' hash joins
        cur.execute("SET LOCAL session_replication_role = replica")
        cur.execute("SET LOCAL synchronous_commit = off")
        # Secondary (non-constraint) indexes: drop now, recreate after the COPY.
        cur.execute(
            """SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
                 FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
                 JOIN pg_namespace s ON s.oid = t.relnamespace
                WHERE s.nspname = 'history' AND t.relname = ANY (%s)
                  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)""",
            (LOADED_TABLES,))
        indexes = cur.fetchall()
        for name, _ in indexes:
            cur.execute(f"DROP INDEX {name}")

        t = time.monotonic()
        na, nc, npr = len(world.accounts), len(world.conversations), len(world.proofs)
        _copy(cur, "accounts", "tenant_key, account_key, account_id, kind, display_name, component_key",
              (f"{tk}\t{t * na + k}\t{i}\t{kind}\t{i}\t{t * na + c}\n"
               for t, tk in copies for k, i, kind, c in world.accounts),
              na * tenants, out)
        # Every conversation in the default language, as upsert_conversation without p_language.
        language = cur.execute("SELECT text_search_config::oid FROM history.search_settings").fetchone()[0]
        _copy(cur, "conversations", "tenant_key, conversation_key, conversation_id, kind, title, language",
              (f"{tk}\t{t * nc + c.key}\tconv-{c.key:07d}\t{c.kind}\t{c.kind} {c.key}\t{language}\n"
               for t, tk in copies for c in world.conversations),
              nc * tenants, out)
        # Each account's name terms, as upsert_account stores them.
        cur.execute("SELECT history._refresh_name_terms(NULL)")

        def memberships() -> Iterator[str]:
            for t, tk in copies:
                for c in world.conversations:
                    for a, since, until in c.members:
                        yield (f"{tk}\t{t * nc + c.key}\t{t * na + a}\t{_ts(since)}"
                               f"\t{_ts(until) if until is not None else chr(92) + 'N'}\n")
        _copy(cur, "memberships", "tenant_key, conversation_key, account_key, since, until", memberships(),
              world.stats["memberships"] * tenants, out)
        _copy(cur, "identity_proofs", "tenant_key, proof_key, proof_id, account_a_key, account_b_key, verified_at",
              (f"{tk}\t{t * npr + k}\t{pid}\t{t * na + a}\t{t * na + b}\t{_ts(v)}\n"
               for t, tk in copies for k, pid, a, b, v in world.proofs), npr * tenants, out)

        chunks = [(start, min(start + _CHUNK, n)) for start in range(0, n, _CHUNK)]
        _copy_blocks(cur, "messages",
                     "tenant_key, message_key, message_id, conversation_key, author_key, sent_at, current_event_key",
                     row_workers.imap(_message_block, [(a, b, t, tk) for t, tk in copies for a, b in chunks]),
                     n * tenants, out)

        edit_bodies: dict[int, str] = {}

        states = chunk_states()

        def events() -> Iterator[tuple[str, int]]:
            # Every copy has the same bodies: the document frequencies are one copy's (one tenant's).
            for t, tk in copies:
                for text, lines, chunk_edit_bodies, live_words in row_workers.imap(
                        _event_block, [(start, stop, state, t, tk) for (start, stop), state in zip(chunks, states)]):
                    edit_bodies.update(chunk_edit_bodies)
                    if t == 0:
                        doc_freq.update(live_words)
                    yield text, lines
                mo, eo = t * n, t * n_events
                yield "".join(f"{tk}\t{eo + k}\t{mo + m}\tedited\t{_escape(edit_bodies[m])}\t{_ts(plan.edited[m])}\n"
                              for m, k in edit_keys.items()), len(edit_keys)
                yield "".join(f"{tk}\t{eo + k}\t{mo + m}\tdeleted\t\\N\t{_ts(plan.deleted[m])}\n"
                              for m, k in delete_keys.items()), len(delete_keys)
        _copy_blocks(cur, "message_events", "tenant_key, event_key, message_key, event_kind, body, occurred_at",
                     events(), n_events * tenants, out)

        _copy(cur, "message_sources", "tenant_key, message_key, source_key",
              (f"{tk}\t{t * n + m}\t{t * n + s}\n" for t, tk in copies for m, srcs in plan.sources.items() for s in srcs),
              sum(len(s) for s in plan.sources.values()) * tenants, out)
        _copy(cur, "message_lineage",
              "tenant_key, message_key, ancestor_key, ancestor_conversation_key, ancestor_sent_at",
              (f"{tk}\t{t * n + m}\t{t * n + a}\t{t * nc + plan.conv[a - 1]}\t{_ts(plan.sent[a - 1])}\n"
               for t, tk in copies for m, anc in plan.ancestors.items() for a in sorted(anc)),
              sum(len(a) for a in plan.ancestors.values()) * tenants, out)
        pairs = sorted(set(zip(plan.author, plan.conv)))
        _copy(cur, "conversation_authors", "tenant_key, author_key, conversation_key",
              (f"{tk}\t{t * na + a}\t{t * nc + c}\n" for t, tk in copies for a, c in pairs),
              len(pairs) * tenants, out)
        t_copy = time.monotonic() - t

        # The projection, exactly as _index_tenant_message writes it: one row per
        # live message, from its current event, analysed by _document_vector
        # in its conversation's language. INSERT ... SELECT runs in one
        # process; CREATE TABLE AS may run its SELECT in parallel workers (not
        # into a temporary table, and not with a hashed EXISTS, hence the join
        # to the lineage's keys), so the analysis, most of the load's CPU, goes
        # through an unlogged staging table dropped again in this transaction.
        # Its rows are merged in message (sent_at) order and read back in that
        # order by the plain, never parallel, INSERT ... SELECT, so the rows
        # of one hour lie together: the time index's postings and the slices'
        # heap fetches rely on it (unordered, the text index took 170 s to
        # build at 10M instead of 126). The joins name tenant_key: the unique
        # keys include it, and only then does the planner, with no statistics
        # yet, know each message has one event and one conversation (else it
        # chose nested loops, the projection 1.8 times as slow at 100k).
        t = time.monotonic()
        if out is not None:
            out.write("  message_search_documents (_document_vector in SQL, parallel) ...\n")
        workers = int(cur.execute("SHOW max_parallel_workers_per_gather").fetchone()[0])
        cur.execute(f"SET LOCAL max_parallel_workers_per_gather = {max(workers, 2)}")
        cur.execute(
            """CREATE UNLOGGED TABLE history._bulk_projection AS
               SELECT m.message_key, m.tenant_key, m.message_id, m.conversation_key, m.author_key, m.sent_at,
                      l.message_key IS NOT NULL AS has_lineage,
                      history._document_vector(e.body, c.language) AS document
                 FROM history.messages m
                 JOIN history.message_events e
                   ON e.event_key = m.current_event_key AND e.tenant_key = m.tenant_key
                 JOIN history.conversations c
                   ON c.conversation_key = m.conversation_key AND c.tenant_key = m.tenant_key
                 LEFT JOIN (SELECT DISTINCT message_key FROM history.message_lineage) l
                        ON l.message_key = m.message_key
                WHERE e.event_kind <> 'deleted'
                ORDER BY m.message_key""")
        cur.execute(
            """INSERT INTO history.message_search_documents
                      (message_key, tenant_key, message_id, conversation_key, author_key, sent_at, has_lineage, document)
               SELECT message_key, tenant_key, message_id, conversation_key, author_key, sent_at, has_lineage, document
                 FROM history._bulk_projection""")
        cur.execute("DROP TABLE history._bulk_projection")
        t_project = time.monotonic() - t

        t = time.monotonic()
        for name, ddl in indexes:
            started_index = time.monotonic()
            cur.execute(ddl)
            if out is not None:
                out.write(f"  index {name}: {time.monotonic() - started_index:.1f}s\n")
        # Identity sequences continue after the loaded keys, so post_message etc. work afterwards.
        for table, col in [("conversations", "conversation_key"), ("memberships", "membership_key"),
                           ("identity_proofs", "proof_key"), ("messages", "message_key"),
                           ("message_events", "event_key"), ("accounts", "account_key")]:
            cur.execute(f"SELECT setval(pg_get_serial_sequence('history.{table}', '{col}'), "
                        f"coalesce((SELECT max({col}) FROM history.{table}), 0) + 1, false)")
        t_index = time.monotonic() - t

        # The foreign keys, checked once and set-wise (their triggers were off),
        # their joins planned from the loaded rows' statistics (ANALYZE counts
        # this transaction's own rows; the tables had none).
        t = time.monotonic()
        cur.execute(f"ANALYZE {_LOADED_TABLE_LIST}")
        problems = check_references(cur)
        if problems:
            raise RuntimeError(f"bulk load is inconsistent: {problems}")
        cur.execute("SET LOCAL session_replication_role = origin")
        t_check = time.monotonic() - t
        conn.commit()
        cur.execute("SELECT pg_current_wal_insert_lsn()")
        committed_lsn = cur.fetchone()[0]
        conn.commit()

    t = time.monotonic()
    with psycopg.connect(dsn, autocommit=True) as connection:
        vacuum: Any = connection
        # VACUUM marks a page all-visible (what index-only scans need) only
        # once it can set its tuples' commit hint bits, and it cannot while
        # the commit LSN PostgreSQL keeps for that transaction's group is
        # unflushed: the load's own commit, and with synchronous_commit off
        # also each earlier table's VACUUM. So wait for the load's commit to
        # be flushed and commit each table's VACUUM synchronously (without
        # this, every table after the first had no all-visible page).
        vacuum.execute("SET synchronous_commit = on")
        while not vacuum.execute("SELECT pg_current_wal_flush_lsn() >= %s::pg_lsn", (committed_lsn,)).fetchone()[0]:
            time.sleep(0.05)
        vacuum.execute(f"VACUUM {_LOADED_TABLE_LIST}")
    t_vacuum = time.monotonic() - t
    world.doc_freq = doc_freq
    total = time.monotonic() - started
    result = {
        "messages": n * tenants, "events": n_events * tenants, "tenants": tenants,
        "edited": len(plan.edited) * tenants, "deleted": len(plan.deleted) * tenants,
        "with_lineage": len(plan.ancestors) * tenants,
        "lineage_rows": sum(len(a) for a in plan.ancestors.values()) * tenants,
        "seconds": {"plan": round(t_plan, 2), "copy": round(t_copy, 2), "projection": round(t_project, 2),
                    "indexes": round(t_index, 2), "checks": round(t_check, 2), "vacuum_analyze": round(t_vacuum, 2),
                    "total": round(total, 2)},
        "messages_per_s": round(n * tenants / total, 1) if total else None,
    }
    result.update(world.stats)
    return result


# The loaded tables that carry tenant_key (all of them); a load leaves every
# row in the built-in tenant.
_TENANT_KEYED = frozenset(LOADED_TABLES)

# Each (child, column, parent, parent column): the FKs of the loaded tables
# but the two between messages and message_events, which check_references
# tests in its passes over those tables, with the invariants of events.
_REFERENCES = [
    ("memberships", "conversation_key", "conversations", "conversation_key"),
    ("memberships", "account_key", "accounts", "account_key"),
    ("identity_proofs", "account_a_key", "accounts", "account_key"),
    ("identity_proofs", "account_b_key", "accounts", "account_key"),
    ("messages", "conversation_key", "conversations", "conversation_key"),
    ("messages", "author_key", "accounts", "account_key"),
    ("message_sources", "message_key", "messages", "message_key"),
    ("message_sources", "source_key", "messages", "message_key"),
    ("message_lineage", "message_key", "messages", "message_key"),
    ("message_lineage", "ancestor_key", "messages", "message_key"),
    ("conversation_authors", "conversation_key", "conversations", "conversation_key"),
    ("conversation_authors", "author_key", "accounts", "account_key"),
    ("message_search_documents", "message_key", "messages", "message_key"),
]

# Each (query, rules): one query counting the rows that break each rule.
# The events' rules take one pass over the events and one over the messages
# (with their current event and projection row) instead of a query per rule:
# at 10M each pass costs about what one rule did. A current event that is
# its own message's and has no newer event of that message is its latest.
_RULE_PASSES = [
    ("""SELECT count(*) FILTER (WHERE m.message_key IS NULL),
               count(*) FILTER (WHERE e.event_key > m.current_event_key)
          FROM history.message_events e
          LEFT JOIN history.messages m ON m.message_key = e.message_key AND m.tenant_key = e.tenant_key""",
     ["message_events.message_key without messages", "events newer than their message's current event"]),
    ("""SELECT count(*) FILTER (WHERE e.event_key IS NULL),
               count(*) FILTER (WHERE e.message_key <> m.message_key OR e.tenant_key <> m.tenant_key),
               count(*) FILTER (WHERE e.event_kind <> 'deleted' AND d.message_key IS NULL),
               count(*) FILTER (WHERE e.event_kind = 'deleted' AND d.message_key IS NOT NULL)
          FROM history.messages m
          LEFT JOIN history.message_events e ON e.event_key = m.current_event_key
          LEFT JOIN history.message_search_documents d
                 ON d.message_key = m.message_key AND d.tenant_key = m.tenant_key""",
     ["messages.current_event_key without message_events", "current event of another message",
      "live message without projection row", "projection row of a deleted message"]),
    ("""SELECT count(*) FROM history.messages m WHERE NOT EXISTS
            (SELECT 1 FROM history.conversation_authors ca
              WHERE ca.author_key = m.author_key AND ca.conversation_key = m.conversation_key)""",
     ["author missing from conversation_authors"]),
    ("""SELECT count(*) FROM history.accounts a
         WHERE a.name_languages IS DISTINCT FROM history._query_languages()::text[]
            OR a.name_terms IS DISTINCT FROM
               coalesce(history._query_terms(a.display_name, history._query_languages(), 2147483647), '{}')""",
     ["name terms not as upsert_account stores them"]),
    ("""SELECT count(*) FROM history.accounts a
         WHERE a.component_key > a.account_key AND NOT EXISTS
               (SELECT 1 FROM history.accounts b WHERE b.account_key = a.component_key)""",
     ["component is not the smallest linked key"]),
]


def check_references(cur: Any) -> list[str]:
    """Dangling references, and the invariants post_message keeps; [] when consistent."""
    problems = []
    for child, col, parent, pcol in _REFERENCES:
        # Between two tables keyed by tenant the foreign key includes it.
        same_tenant = " AND p.tenant_key = c.tenant_key" if parent in _TENANT_KEYED else ""
        cur.execute(f"SELECT count(*) FROM history.{child} c WHERE NOT EXISTS "
                    f"(SELECT 1 FROM history.{parent} p WHERE p.{pcol} = c.{col}{same_tenant})")
        k = cur.fetchone()[0]
        if k:
            problems.append(f"{k} {child}.{col} without {parent}")
    for sql, rules in _RULE_PASSES:
        cur.execute(sql)
        problems += [f"{k}: {rule}" for k, rule in zip(cur.fetchone(), rules) if k]
    return problems
