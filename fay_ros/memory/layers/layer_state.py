"""One owner's layers as stored: plain JSON documents, one per layer plus the pipeline's
buffers, and the changes an update makes (the changelog rows)."""

from __future__ import annotations

import datetime
import hashlib
from dataclasses import dataclass, field

from .layer_config import LAYERS, WEEK

PIPELINE = "pipeline"
DOCS = (PIPELINE, *LAYERS)

CURRENT = "current"
SUPERSEDED = "superseded"  # replaced by an explicit statement; kept as history
REMOVED = "removed"  # decayed below the threshold; kept as history
CANDIDATE = "candidate"
ACTIVE = "active"
RETRACTED = "retracted"


def day_of(t: float) -> str:
    """The UTC date of a signal time, YYYY-MM-DD."""
    return datetime.datetime.fromtimestamp(t, datetime.UTC).date().isoformat()


def item_id(*parts: object) -> str:
    return hashlib.sha1("\x1f".join(map(str, parts)).encode()).hexdigest()[:12]


@dataclass
class Change:
    """One changelog row: what changed in which layer, why, on which turns."""

    time: float
    layer: str
    item: str
    old: str
    new: str
    reason: str
    evidence: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "time": self.time,
            "layer": self.layer,
            "item": self.item,
            "old": self.old,
            "new": self.new,
            "reason": self.reason,
            "evidence": list(self.evidence),
        }


def merge_ids(a: list[str], b: list[str]) -> list[str]:
    return list(dict.fromkeys([*a, *b]))


def empty_docs() -> dict[str, dict]:
    return {
        PIPELINE: {"buffers": {}, "total": 0, "last_time": 0.0},
        "preferences": {"items": []},
        "awareness": {"notes": []},
        "insights": {"items": []},
        "soul": {
            "portrait": "",
            "portrait_evidence": [],
            "traits": [],
            "values": [],
            "life_stage": "",
            "deep_needs": [],
            "updated": 0.0,
            "updates": 0,
        },
    }


class OwnerLayers:
    """The documents of one owner, with the small helpers the updaters share."""

    def __init__(self, owner: str, docs: dict[str, dict]) -> None:
        self.owner = owner
        self.docs = empty_docs()
        for name, doc in docs.items():
            if name in self.docs:
                self.docs[name].update(doc)

    @property
    def pipeline(self) -> dict:
        return self.docs[PIPELINE]

    @property
    def preferences(self) -> list[dict]:
        return self.docs["preferences"]["items"]

    @property
    def notes(self) -> list[dict]:
        return self.docs["awareness"]["notes"]

    @property
    def insights(self) -> list[dict]:
        return self.docs["insights"]["items"]

    @property
    def soul(self) -> dict:
        return self.docs["soul"]

    @property
    def now(self) -> float:
        """The owner's time: the latest signal's (not the wall clock)."""
        return float(self.pipeline.get("last_time", 0.0))

    def buffer(self, layer: str) -> dict:
        return self.pipeline["buffers"].setdefault(
            layer, {"signals": [], "last_updated": None, "started": None, "updates": 0}
        )

    def current_preference(self, thing: str) -> dict | None:
        return next((p for p in self.preferences if p["status"] == CURRENT and p["thing"] == thing), None)

    def current_preferences(self) -> list[dict]:
        return [p for p in self.preferences if p["status"] == CURRENT]


def effective_weight(pref: dict, now: float, decay_per_week: float) -> float:
    """The weight at `now`: decayed by decay_per_week for every inactive week since last_seen."""
    weeks = max(0.0, now - float(pref["last_seen"])) / WEEK
    return float(pref["weight"]) * decay_per_week**weeks


def describe_preference(pref: dict) -> str:
    verb = "likes" if pref["likes"] else "does not like"
    return (
        f"{verb} {pref['thing']}"
        if pref.get("explicit")
        else f"seems to {'enjoy' if pref['likes'] else 'avoid'} {pref['thing']}"
    )
