"""What one heard turn tells the layered profile: a ProfileSignal, classified by rules.

- explicit statements about oneself come from `self_facts.extract_self_facts` (the owner's
  own words: confirmed, the fast path of the preference layer);
  ("I don't play games any more" / "我不玩游戏了": a habit given up is one too, a taste that is
  no longer current);
- activities the owner reports ("I went hiking again", "我今天又去爬山了") are *mentions*: the
  preference layer infers from them slowly, through its buffer (an inference, never a fact).

All times are the turn's time (a replay feeds weeks of talk in minutes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model import is_guest
from ..self_facts import SelfFact, extract_self_facts, taste_from_content

STATEMENT = "statement"  # holds explicit facts or stopped habits
MENTION = "mention"  # reports activities (inferred preferences)
CHAT = "chat"  # anything else (an event, and material for awareness)

USER = "user"

# "I went hiking again today", "I played chess", "I watched football"
_DID_EN = re.compile(
    r"\bI(?:'ve| have| just)? (?:went|played|watched|drank|ate|cooked|read|did)\s+(?:some |a |an |the )?"
    r"([a-z][a-z]{1,20}(?: [a-z]{2,20})?)(?= today| again| yesterday| this| last| with|[.,!?;]|$)",
    re.I,
)
# "我今天又去爬山了", "我刚玩了游戏", "我昨天喝了咖啡"
_DID_ZH = re.compile(
    r"我(?:今天|昨天|刚才|刚|又|也|还|早上|晚上)*(?:去|玩|喝|吃|看|打)了?([\u4e00-\u9fff]{1,4}?)(?:了|啦|呢|[，。！？,.!?]|$)"
)
_TRAILING = re.compile(r"[了啦呢吧啊]+$")
_NOT_THINGS = {"it", "that", "this", "there", "home", "out", "to", "so", "什么", "哪里", "一下"}


def thing_key(thing: str) -> str:
    """One spelling of a preference's object: "Coffee " → "coffee", "可乐了" → "可乐"."""
    return _TRAILING.sub("", " ".join(thing.strip().lower().split()))


@dataclass(frozen=True)
class Taste:
    thing: str  # as said
    likes: bool
    explicit: bool  # the owner said so (a fact); False: inferred from an activity


@dataclass(frozen=True)
class ProfileSignal:
    """One turn as the layered profile sees it. `turn_id` is a string (the turn log's id) and
    `time` the turn's time in seconds since the epoch."""

    owner: str
    turn_id: str
    time: float
    speaker: str
    text: str
    facts: tuple[SelfFact, ...] = ()
    kind: str = CHAT
    tastes: tuple[Taste, ...] = ()

    def to_dict(self) -> dict:
        return {
            "turn_id": self.turn_id,
            "time": self.time,
            "speaker": self.speaker,
            "text": self.text,
            "kind": self.kind,
            "tastes": [[t.thing, t.likes, t.explicit] for t in self.tastes],
            "facts": [[f.kind, f.key, f.value, f.content, f.language] for f in self.facts],
        }

    @classmethod
    def from_dict(cls, owner: str, d: dict) -> ProfileSignal:
        return cls(
            owner=owner,
            turn_id=str(d["turn_id"]),
            time=float(d["time"]),
            speaker=str(d.get("speaker", USER)),
            text=str(d.get("text", "")),
            kind=str(d.get("kind", CHAT)),
            tastes=tuple(Taste(str(a), bool(b), bool(c)) for a, b, c in d.get("tastes", [])),
            facts=tuple(SelfFact(*map(str, f)) for f in d.get("facts", [])),
        )


_TIME_WORDS = re.compile(r"\s+(?:again|today|yesterday|tonight|too|this|last)$", re.I)


def activities(text: str) -> list[str]:
    """What the owner reports doing ("I went hiking again today" → ["hiking"])."""
    found = [_TIME_WORDS.sub("", m.group(1)) for m in _DID_EN.finditer(text)]
    found += [m.group(1) for m in _DID_ZH.finditer(text)]
    return [t for t in (thing_key(f) for f in found) if t and t not in _NOT_THINGS]


def signals_from_turn(
    owner: str, turn_id: str, time: float, speaker: str, text: str, facts: tuple[SelfFact, ...] | None = None
) -> list[ProfileSignal]:
    """The signals of one heard turn: [] for the guest, an empty text or another speaker than
    the owner; else one signal. `facts`: already extracted statements (None: extract them)."""
    text = (text or "").strip()
    if is_guest(owner) or not text or speaker != USER:
        return []
    facts = tuple(extract_self_facts(text)) if facts is None else tuple(facts)
    tastes: dict[str, Taste] = {}
    for fact in facts:
        taste = taste_from_content(fact.content) if fact.kind == "preference" else None
        if taste is not None:
            tastes[thing_key(taste[0])] = Taste(thing_key(taste[0]), taste[1], True)
    explicit = bool(facts) or bool(tastes)
    for thing in activities(text):
        tastes.setdefault(thing, Taste(thing, True, False))
    kind = STATEMENT if explicit else MENTION if tastes else CHAT
    return [ProfileSignal(owner, str(turn_id), float(time), speaker, text, facts, kind, tuple(tastes.values()))]
