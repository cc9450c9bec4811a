"""docs/decisions.md ("Proofs relied on", "Delivery"): the recheck of a
run's evidence before the agent's reply goes out."""

from __future__ import annotations

from datetime import datetime

from . import eligibility
from .world import Message, Run, World

REASONS = ("deleted", "perspective", "proof_revoked", "audience", "lineage")


def relied_proofs(world: World, run: Run, m: Message) -> set[str]:
    """The proofs an evidence message's eligibility or speaker match relied on, at search time.

    * an audience account that is not itself a member of a *direct* conversation
      (of the message or of any message in its lineage) at that message's time
      relies on the unrevoked proofs of its whole identity component;
    * a message written by an account linked to the requester (not the
      requester itself) relies on the unrevoked proofs of the requester's component.
    """
    points = [m] + [world.messages[a] for a in world.ancestors(m.message_id)]
    proofs: set[str] = set()
    for account in run.audience:
        for p in points:
            if world.conversations[p.conversation_id] == "direct" and \
                    not world.was_member(account, p.conversation_id, p.sent_at):
                proofs |= world.component_proofs(account)
                break
    if m.author_id != run.requester_id and m.author_id in world.linked(run.requester_id):
        proofs |= world.component_proofs(run.requester_id)
    return proofs


def delivery_audience(world: World, run: Run, sent_at: datetime | None = None) -> frozenset[str]:
    """An explicit audience as given; a default one recomputed from the memberships open now (a
    since ahead of the clock counts) and, for a reply, those that cover its ``sent_at``."""
    if run.explicit_audience is not None:
        return frozenset(run.explicit_audience)
    audience = world.default_audience(run.agent_id, run.conversation_id)
    if sent_at is not None:
        audience |= {acc for acc in world.parties(run.conversation_id)
                     if acc != run.agent_id and world.was_member(acc, run.conversation_id, sent_at)}
    return audience


def first_problem(world: World, run: Run, audience: frozenset[str], m: Message) -> str | None:
    if not m.alive:
        return "deleted"
    if not eligibility.perspective_passes(world, run.agent_id, m):
        return "perspective"
    if any(world.proofs[p].revoked for p in run.evidence[m.message_id]):
        return "proof_revoked"
    if not eligibility.audience_passes(world, audience, m.conversation_id, m.sent_at):
        return "audience"
    if not eligibility.lineage_passes(world, audience, m):
        return "lineage"
    return None


class DeliveryError(Exception):
    def __init__(self, sqlstate: str):
        super().__init__(sqlstate)
        self.sqlstate = sqlstate


def check_delivery(world: World, run: Run, sent_at: datetime | None = None) -> list[tuple[str, str]]:
    """(message id, reason) for every evidence message that no longer passes, by message id;
    ``sent_at``: the reply's time (record_reply's check), None for check_delivery."""
    if run.ended:
        raise DeliveryError("HS002")
    audience = delivery_audience(world, run, sent_at)
    problems = []
    for mid in sorted(run.evidence):
        reason = first_problem(world, run, audience, world.messages[mid])
        if reason is not None:
            problems.append((mid, reason))
    return problems
