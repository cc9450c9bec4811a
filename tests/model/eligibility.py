"""Who may see what, rule by rule: perspective, audience, lineage, alive, not in context."""

from __future__ import annotations

from datetime import datetime

from .world import Message, Run, World


def can_read(world: World, account_id: str, conversation_id: str, t: datetime) -> bool:
    """Could this audience account read what was said in the conversation at t?

    It was a member then; or, in a *direct* conversation only, an account linked
    to it (by unrevoked proofs, transitively) was a member then.
    """
    if world.was_member(account_id, conversation_id, t):
        return True
    if world.conversations[conversation_id] == "direct":
        for other in world.linked(account_id):
            if other != account_id and world.was_member(other, conversation_id, t):
                return True
    return False


def audience_passes(world: World, audience: frozenset[str], conversation_id: str, t: datetime) -> bool:
    """Every audience account could read it. An empty audience restricts nothing."""
    return all(can_read(world, account, conversation_id, t) for account in audience)


def perspective_passes(world: World, agent_id: str, message: Message) -> bool:
    """The agent itself was a member of the message's conversation when it was sent."""
    return world.was_member(agent_id, message.conversation_id, message.sent_at)


def lineage_passes(world: World, audience: frozenset[str], message: Message) -> bool:
    """Every message in its lineage, transitively, passes the audience check."""
    for ancestor_id in world.ancestors(message.message_id):
        ancestor = world.messages[ancestor_id]
        if not audience_passes(world, audience, ancestor.conversation_id, ancestor.sent_at):
            return False
    return True


def first_failed_rule(world: World, run: Run, message: Message) -> str | None:
    """The first eligibility rule the message fails for the run (in the audit's order), or None."""
    if not perspective_passes(world, run.agent_id, message):
        return "perspective"
    if not audience_passes(world, run.audience, message.conversation_id, message.sent_at):
        return "audience"
    if not lineage_passes(world, run.audience, message):
        return "lineage"
    if not message.alive:
        return "alive"
    if message.message_id in run.context:
        return "in_context"
    return None


def eligible(world: World, run: Run, message: Message) -> bool:
    return first_failed_rule(world, run, message) is None
