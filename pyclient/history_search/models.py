"""Frozen dataclasses for what the SQL surface returns.

They are built **by field name** from the JSON form of the composite types
(the composite ``history.search_result`` loaded as dicts, or its ``to_jsonb``): a key the client does not know is
ignored, so adding a field to ``history.search_result`` or
``history.search_hit`` (the surface may gain fields) never breaks it. A field
the client expects but the server did not send is an error (a renamed field
would be one, and the surface never renames a field).

Times are timezone-aware and normalised to UTC, whatever the session's
``TimeZone``. ``to_dict()`` gives back a JSON-able dict (times as RFC 3339
strings, the event id as a string).
"""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping, TypeVar

__all__ = [
    "DeliveryProblem",
    "Neighbour",
    "RankingReasons",
    "SearchHit",
    "SearchResult",
    "parse_time",
]

T = TypeVar("T")


def parse_time(value: Any) -> datetime:
    """A timezone-aware UTC datetime from a ``timestamptz`` (datetime or its JSON string)."""
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, str):
        dt = datetime.fromisoformat(value)
    else:
        raise TypeError(f"expected a timestamp, got {type(value).__name__}: {value!r}")
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ValueError(f"timestamp without a time zone: {value!r}")
    return dt.astimezone(timezone.utc)


def _pick(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    """The values of ``data`` for ``cls``'s fields, by name; unknown keys ignored."""
    if not isinstance(data, Mapping):
        raise TypeError(f"{cls.__name__}: expected an object, got {type(data).__name__}")
    names = [f.name for f in dataclasses.fields(cls)]
    missing = [n for n in names if n not in data]
    if missing:
        raise ValueError(f"{cls.__name__}: the server sent no {', '.join(missing)}")
    return {n: data[n] for n in names}


def _iso(dt: datetime) -> str:
    return dt.isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class RankingReasons:
    """Why a hit ranks where it does: each weighted component, their total, and the query terms it matched."""

    text: float
    coverage: float
    actor: float
    conversation: float
    participation: float
    recency: float
    total: float
    matched_terms: tuple[str, ...]
    named_speaker: float = 0.0  # a key beside the weighted signals (docs/decisions.md, "Ranking")
    session: float = 0.0  # the best match around it in its conversation (docs/decisions.md, "Ranking")
    period: float = 0.0  # sent in (or near) the time the query names (docs/decisions.md, "Ranking")
    tells_time: float = 0.0  # the query asks when and the message tells a time (docs/decisions.md, "Ranking")
    window_coverage: float = 0.0  # the query's rarity in it and its neighbours (docs/decisions.md, "Ranking")
    feedback: float = 0.0  # words of the best matches' windows it contains (docs/decisions.md, "Ranking")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RankingReasons":
        v = _pick(cls, {"named_speaker": 0.0, "session": 0.0, "period": 0.0, "tells_time": 0.0,
                        "window_coverage": 0.0, "feedback": 0.0, **data})
        return cls(
            **{k: float(v[k]) for k in ("text", "coverage", "actor", "conversation",
                                         "participation", "recency", "total", "named_speaker",
                                         "session", "period", "tells_time", "window_coverage", "feedback")},
            matched_terms=tuple(str(t) for t in (v["matched_terms"] or ())),
        )

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["matched_terms"] = list(self.matched_terms)
        return d


@dataclass(frozen=True)
class Neighbour:
    """A message next to a hit in its conversation (context; it passed the same eligibility checks)."""

    message_id: str
    conversation_id: str
    sent_at: datetime
    speaker_id: str
    speaker_role: str  # 'requester' | 'you' | 'other'
    body: str
    #: the server returned only the first ``search_settings.max_returned_body_bytes`` of a longer text
    body_truncated: bool = False

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Neighbour":
        v = _pick(cls, data)
        v["sent_at"] = parse_time(v["sent_at"])
        v["body_truncated"] = bool(v["body_truncated"])
        return cls(**v)

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "sent_at": _iso(self.sent_at)}


@dataclass(frozen=True)
class SearchHit:
    """One hit: the message, its score and reasons, and up to two neighbours each side, nearest first."""

    message_id: str
    conversation_id: str
    sent_at: datetime
    speaker_id: str
    speaker_role: str  # 'requester' | 'you' | 'other'
    body: str
    score: float
    reasons: RankingReasons
    before: tuple[Neighbour, ...]
    after: tuple[Neighbour, ...]
    #: the server returned only the first ``search_settings.max_returned_body_bytes`` of a longer text
    body_truncated: bool = False

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SearchHit":
        v = _pick(cls, data)
        v["body_truncated"] = bool(v["body_truncated"])
        v["sent_at"] = parse_time(v["sent_at"])
        v["score"] = float(v["score"])
        v["reasons"] = RankingReasons.from_dict(v["reasons"])
        v["before"] = tuple(Neighbour.from_dict(n) for n in (v["before"] or ()))
        v["after"] = tuple(Neighbour.from_dict(n) for n in (v["after"] or ()))
        return cls(**v)

    def to_dict(self) -> dict[str, Any]:
        return {
            "message_id": self.message_id,
            "conversation_id": self.conversation_id,
            "sent_at": _iso(self.sent_at),
            "speaker_id": self.speaker_id,
            "speaker_role": self.speaker_role,
            "body": self.body,
            "score": self.score,
            "reasons": self.reasons.to_dict(),
            "before": [n.to_dict() for n in self.before],
            "after": [n.to_dict() for n in self.after],
            "body_truncated": self.body_truncated,
        }


@dataclass(frozen=True)
class SearchResult:
    """What one ``search_history`` call returned."""

    status: str  # 'ok' | 'search_budget_exhausted'
    search_event_id: uuid.UUID
    budget_used: int
    budget_remaining: int
    hits: tuple[SearchHit, ...]

    @property
    def budget_exhausted(self) -> bool:
        return self.status == "search_budget_exhausted"

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "SearchResult":
        v = _pick(cls, data)
        event = v["search_event_id"]
        v["search_event_id"] = event if isinstance(event, uuid.UUID) else uuid.UUID(str(event))
        v["budget_used"] = int(v["budget_used"])
        v["budget_remaining"] = int(v["budget_remaining"])
        v["hits"] = tuple(SearchHit.from_dict(h) for h in (v["hits"] or ()))
        return cls(**v)

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "search_event_id": str(self.search_event_id),
            "budget_used": self.budget_used,
            "budget_remaining": self.budget_remaining,
            "hits": [h.to_dict() for h in self.hits],
        }


@dataclass(frozen=True)
class DeliveryProblem:
    """Evidence of a run that no longer passes, and why (deleted, perspective, proof_revoked, audience, lineage)."""

    message_id: str
    reason: str

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "DeliveryProblem":
        return cls(**_pick(cls, data))

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
