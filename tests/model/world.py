"""The model's state of the world: what the SQL surface has been told so far.

Times are timezone-aware datetimes. Every time a scenario uses lies in the
past (PITFALLS.md: "Build test worlds in the past"), so a membership is open
"now" exactly when it has no end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

BUDGET = 400


@dataclass
class Membership:
    since: datetime
    until: datetime | None = None  # None while it lasts

    def covers(self, t: datetime) -> bool:
        """[since, until): since inclusive, until exclusive."""
        return self.since <= t and (self.until is None or t < self.until)


@dataclass
class Message:
    message_id: str
    conversation_id: str
    author_id: str
    sent_at: datetime
    sources: tuple[str, ...]
    # The body after each canonical event, in insertion order; None marks a deletion.
    bodies: list[str | None] = field(default_factory=list)

    @property
    def alive(self) -> bool:
        return self.bodies[-1] is not None

    @property
    def body(self) -> str | None:
        return self.bodies[-1]


@dataclass
class Proof:
    proof_id: str
    account_a: str
    account_b: str
    revoked: bool = False


@dataclass
class Run:
    name: str  # the scenario's name for the run; the SQL token is kept by the test
    agent_id: str
    conversation_id: str
    requester_id: str
    current_message_id: str
    loaded_message_ids: tuple[str, ...]
    explicit_audience: tuple[str, ...] | None
    audience: frozenset[str]  # what every search of the run uses (decisions: fixed at begin_run)
    ended: bool = False
    # message id -> ids of the proofs its eligibility or speaker match relied on
    evidence: dict[str, set[str]] = field(default_factory=dict)

    @property
    def context(self) -> set[str]:
        return {self.current_message_id, *self.loaded_message_ids}


@dataclass
class World:
    """One tenant's world (the default tenant's, for the runs of a scenario).

    Runs see only their own tenant: the model reads nothing but these fields, so
    what another tenant holds (``elsewhere``, written with the same ids) can
    change no search, score, count or delivery check of this world's runs.
    """

    accounts: dict[str, str] = field(default_factory=dict)  # id -> 'person' | 'agent'
    conversations: dict[str, str] = field(default_factory=dict)  # id -> 'direct' | 'group' | 'channel'
    # (conversation id, account id) -> memberships in the order they were opened
    memberships: dict[tuple[str, str], list[Membership]] = field(default_factory=dict)
    messages: dict[str, Message] = field(default_factory=dict)  # in posting order
    proofs: dict[str, Proof] = field(default_factory=dict)
    runs: dict[str, Run] = field(default_factory=dict)
    # tenant id -> that tenant's world; never read by this world's runs
    elsewhere: dict[str, World] = field(default_factory=dict)

    # --- memberships -------------------------------------------------------

    def was_member(self, account_id: str, conversation_id: str, t: datetime) -> bool:
        return any(m.covers(t) for m in self.memberships.get((conversation_id, account_id), []))

    def ever_member(self, account_id: str, conversation_id: str) -> bool:
        """Has any membership of the conversation been recorded for the account?"""
        return bool(self.memberships.get((conversation_id, account_id)))

    def open_membership(self, conversation_id: str, account_id: str) -> Membership | None:
        for m in self.memberships.get((conversation_id, account_id), []):
            if m.until is None:
                return m
        return None

    def last_until(self, conversation_id: str, account_id: str) -> datetime | None:
        ends = [m.until for m in self.memberships.get((conversation_id, account_id), []) if m.until is not None]
        return max(ends) if ends else None

    def parties(self, conversation_id: str) -> set[str]:
        """Every account that ever had a membership of the conversation."""
        return {acc for (conv, acc), ms in self.memberships.items() if conv == conversation_id and ms}

    def open_members(self, conversation_id: str) -> set[str]:
        return {acc for (conv, acc), ms in self.memberships.items()
                if conv == conversation_id and any(m.until is None for m in ms)}

    def default_audience(self, run_agent: str, conversation_id: str, at: datetime | None = None) -> frozenset[str]:
        """The default audience: members of the destination whose membership is open at ``at`` (now
        when None), the agent excepted. Open means not ended by then: a since still ahead of ``at``
        (a join recorded by a clock running ahead) counts as open."""
        t = datetime.now(timezone.utc) if at is None else at
        return frozenset({acc for (conv, acc), ms in self.memberships.items()
                          if conv == conversation_id and any(m.until is None or m.until > t for m in ms)}
                         - {run_agent})

    # --- identity links ----------------------------------------------------

    def linked(self, account_id: str) -> set[str]:
        """The account and every account reachable from it through unrevoked proofs.

        Links join person accounts only: a proof with an agent at either end
        (link_identity refuses one; an earlier release accepted it) joins nothing.
        """
        seen = {account_id}
        todo = [account_id]
        while todo:
            current = todo.pop()
            for p in self.proofs.values():
                if p.revoked or "agent" in (self.accounts.get(p.account_a), self.accounts.get(p.account_b)):
                    continue
                for a, b in ((p.account_a, p.account_b), (p.account_b, p.account_a)):
                    if a == current and b not in seen:
                        seen.add(b)
                        todo.append(b)
        return seen

    def component_proofs(self, account_id: str) -> set[str]:
        """The unrevoked proofs of the account's identity component (docs/decisions.md, "Proofs relied on")."""
        component = self.linked(account_id)
        return {p.proof_id for p in self.proofs.values()
                if not p.revoked and p.account_a in component and p.account_b in component}

    def has_written(self, authors: set[str], conversation_id: str) -> bool:
        """Has any of these accounts written in the conversation (any message ever posted, deleted or not)?"""
        return any(m.conversation_id == conversation_id and m.author_id in authors for m in self.messages.values())

    # --- lineage -----------------------------------------------------------

    def ancestors(self, message_id: str) -> set[str]:
        """Every message in the lineage of a message, transitively (deleted ones included)."""
        seen: set[str] = set()
        todo = list(self.messages[message_id].sources)
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.add(current)
            todo.extend(self.messages[current].sources)
        return seen

    def live_message_ids(self) -> list[str]:
        return [mid for mid, m in self.messages.items() if m.alive]
