"""Reading LoCoMo-format conversations (Maharana et al., ACL 2024).

One JSON file per conversation: ``speaker_a``, ``speaker_b``,
``session_N_date_time`` ("1:47 pm on 18 May, 2023") and ``session_N`` (turns
``{speaker, dia_id, text}``, some with ``blip_caption``), and ``qa``
(``{question, evidence: [dia_id...], category}``). The release wraps these in
``{"conversation": {...}, "qa": [...]}`` in some copies and not in others;
both are read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

__all__ = ["Turn", "Question", "Conversation", "load_dir", "load_file", "normalise_evidence", "turn_body"]

# Turns of one session are this far apart, so conversation order (sent_at,
# message_id) is the dialogue's order ("D1:10" sorts before "D1:2" as text).
TURN_SPACING = timedelta(seconds=30)

_SESSION_TIME = re.compile(r"^session_(\d+)_date_time$")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None
    sent_at: datetime
    index: int  # position in the whole conversation, 0-based


@dataclass(frozen=True)
class Question:
    index: int
    question: str
    category: int
    evidence: tuple[str, ...]  # normalised dia_ids that name a turn


@dataclass
class Conversation:
    name: str
    speakers: tuple[str, str]
    turns: list[Turn]
    questions: list[Question]
    evidence_stats: dict[str, int] = field(default_factory=dict)


def turn_body(turn: Turn) -> str:
    """The message body of a turn: its text, and the caption of a shared image as the image's description.

    A person reading the chat sees the image; the caption is the only text
    form of it, and some answers are only in it (docs/relevance.md).
    """
    if turn.caption:
        return f"{turn.text} [image: {turn.caption}]"
    return turn.text


def parse_session_time(text: str) -> datetime:
    # "1:47 pm on 18 May, 2023"; read as UTC.
    return datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)


_DIA = re.compile(r"^D(\d+):(\d+)$")


def normalise_evidence(raw: Any) -> list[str]:
    """Split and repair one evidence entry: ``"D8:6; D9:17"`` → two ids, ``"D:11:26"`` → ``D11:26``,
    ``"D30:05"`` → ``D30:5``. Whatever does not look like ``D<session>:<turn>`` afterwards is returned
    as is (and dropped by the caller when it names no turn)."""
    out = []
    for part in re.split(r"[;,\s]+", str(raw).strip()):
        if not part:
            continue
        p = re.sub(r"^D:", "D", part)
        m = _DIA.match(p)
        out.append(f"D{int(m.group(1))}:{int(m.group(2))}" if m else part)
    return out


def load_file(path: Path) -> Conversation:
    data = json.loads(Path(path).read_text())
    conv = data.get("conversation", data)
    qa = data.get("qa", conv.get("qa", []))
    speakers = (conv["speaker_a"], conv["speaker_b"])
    sessions = sorted(int(m.group(1)) for k in conv if (m := _SESSION_TIME.match(k)))
    turns: list[Turn] = []
    for n in sessions:
        start = parse_session_time(conv[f"session_{n}_date_time"])
        for i, t in enumerate(conv.get(f"session_{n}") or []):
            turns.append(Turn(dia_id=t["dia_id"], speaker=t["speaker"], text=t.get("text") or "",
                              caption=t.get("blip_caption"), sent_at=start + i * TURN_SPACING,
                              index=len(turns)))
    known = {t.dia_id for t in turns}
    stats = {"questions": 0, "evidence_ids": 0, "repaired": 0, "dropped": 0, "questions_without_evidence": 0}
    questions = []
    for i, q in enumerate(qa):
        ids: list[str] = []
        for raw in q.get("evidence") or []:
            parts = normalise_evidence(raw)
            stats["evidence_ids"] += 1
            if parts != [raw]:
                stats["repaired"] += 1
            for p in parts:
                if p not in known:
                    stats["dropped"] += 1
                elif p not in ids:
                    ids.append(p)
        stats["questions"] += 1
        if not ids:
            stats["questions_without_evidence"] += 1
        questions.append(Question(index=i, question=str(q["question"]), category=int(q["category"]),
                                  evidence=tuple(ids)))
    return Conversation(name=Path(path).stem, speakers=speakers, turns=turns, questions=questions,
                        evidence_stats=stats)


def load_dir(path: Path) -> list[Conversation]:
    files = sorted(Path(path).glob("*.json"))
    if not files:
        raise FileNotFoundError(f"no LoCoMo-format *.json files in {path}")
    return [load_file(f) for f in files]
