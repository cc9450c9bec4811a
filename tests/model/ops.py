"""The operations of a scenario, one per call of the SQL surface, and how each
changes the model's world.

Times are whole minutes after BASE (a date in the past) so that a printed
counterexample stays short: ``Post('m3', 'c1', 'p0', 'river stone', 17, ('m1',))``.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import NamedTuple, Union

from .world import Membership, Message, Proof, Run, World

BASE = datetime(2024, 1, 1, tzinfo=timezone.utc)


def at(minute: int) -> datetime:
    return BASE + timedelta(minutes=minute)


# --- the world -------------------------------------------------------------

class Account(NamedTuple):
    account_id: str
    kind: str  # 'person' | 'agent'


class Conversation(NamedTuple):
    conversation_id: str
    kind: str  # 'direct' | 'group' | 'channel'


class AddMember(NamedTuple):
    conversation_id: str
    account_id: str
    since: int


class RemoveMember(NamedTuple):
    conversation_id: str
    account_id: str
    until: int


class Post(NamedTuple):
    message_id: str
    conversation_id: str
    author_id: str
    body: str
    sent_at: int
    sources: tuple[str, ...] = ()


class Edit(NamedTuple):
    message_id: str
    body: str
    at: int


class Delete(NamedTuple):
    message_id: str
    at: int


class Erase(NamedTuple):
    """erase_account: every text of the account goes; its live messages count as deleted."""
    account_id: str
    at: int


class Link(NamedTuple):
    proof_id: str
    account_a: str
    account_b: str
    verified_at: int


class Revoke(NamedTuple):
    proof_id: str
    at: int


class InTenant(NamedTuple):
    """A world operation in another tenant (its ``p_tenant``): ids there are that tenant's own."""
    tenant: str
    op: Account | Conversation | AddMember | RemoveMember | Post | Edit | Delete | Erase | Link | Revoke


# --- runs --------------------------------------------------------------------

class Begin(NamedTuple):
    run: str
    agent_id: str
    conversation_id: str
    requester_id: str
    current_message_id: str
    loaded_message_ids: tuple[str, ...] = ()
    audience: tuple[str, ...] | None = None  # None: the default audience


class Search(NamedTuple):
    run: str
    query: str
    speaker: str | None = "anyone"
    after: int | None = None
    before: int | None = None
    limit: int | None = 8


class Check(NamedTuple):
    run: str


class Reply(NamedTuple):
    run: str
    message_id: str
    body: str
    sent_at: int


class End(NamedTuple):
    run: str


WorldOp = Union[Account, Conversation, AddMember, RemoveMember, Post, Edit, Delete, Erase, Link, Revoke, InTenant]
Op = Union[WorldOp, Begin, Search, Check, Reply, End]
WORLD_OPS = (Account, Conversation, AddMember, RemoveMember, Post, Edit, Delete, Erase, Link, Revoke, InTenant)


def apply(world: World, op: Op) -> None:
    """Change the model's world as the SQL call of ``op`` would, when that call succeeds.

    Search, Check and Reply are decided by the model's search and delivery
    modules; here Reply only records the reply once it is known to pass.
    """
    if isinstance(op, InTenant):
        # Another tenant's world: the runs of this one never read it.
        apply(world.elsewhere.setdefault(op.tenant, World()), op.op)
    elif isinstance(op, Account):
        world.accounts[op.account_id] = op.kind
    elif isinstance(op, Conversation):
        world.conversations[op.conversation_id] = op.kind
    elif isinstance(op, AddMember):
        world.memberships.setdefault((op.conversation_id, op.account_id), []).append(Membership(at(op.since)))
    elif isinstance(op, RemoveMember):
        world.open_membership(op.conversation_id, op.account_id).until = at(op.until)
    elif isinstance(op, Post):
        world.messages[op.message_id] = Message(op.message_id, op.conversation_id, op.author_id, at(op.sent_at),
                                                tuple(op.sources), [op.body])
    elif isinstance(op, Edit):
        world.messages[op.message_id].bodies.append(op.body)
    elif isinstance(op, Delete):
        world.messages[op.message_id].bodies.append(None)
    elif isinstance(op, Erase):
        # The messages stay (ids, order, lineage) as deletions; their texts are gone.
        for m in world.messages.values():
            if m.author_id == op.account_id:
                was_alive = m.alive
                m.bodies[:] = [None] * len(m.bodies)
                if was_alive:
                    m.bodies.append(None)  # the deleted event erasure appends
    elif isinstance(op, Link):
        world.proofs[op.proof_id] = Proof(op.proof_id, op.account_a, op.account_b)
    elif isinstance(op, Revoke):
        world.proofs[op.proof_id].revoked = True
    elif isinstance(op, Begin):
        if op.audience is None:
            audience = world.default_audience(op.agent_id, op.conversation_id)
        else:
            audience = frozenset(op.audience)
        world.runs[op.run] = Run(op.run, op.agent_id, op.conversation_id, op.requester_id, op.current_message_id,
                                 tuple(op.loaded_message_ids),
                                 None if op.audience is None else tuple(op.audience), audience)
    elif isinstance(op, Reply):
        run = world.runs[op.run]
        world.messages[op.message_id] = Message(op.message_id, run.conversation_id, run.agent_id, at(op.sent_at),
                                                tuple(sorted(run.evidence)), [op.body])
        run.ended = True
    elif isinstance(op, End):
        world.runs[op.run].ended = True
    elif isinstance(op, (Search, Check)):
        pass
    else:
        raise TypeError(f"not an operation: {op!r}")
