"""The part of an ActionCue the body consumers read, as a plain value (no ROS types)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Cue:
    behavior: str
    affect: str
    intensity: float = 0.5
    priority: int = 0
    sentiment: float = 0.0
    utterance_id: str = ""

    @classmethod
    def from_message(cls, msg: Any) -> Cue:
        """From a fay_msgs/ActionCue (read by attribute, so this module needs no ROS import)."""
        return cls(
            behavior=msg.behavior,
            affect=msg.affect,
            intensity=float(msg.intensity),
            priority=int(msg.priority),
            sentiment=float(msg.sentiment),
            utterance_id=msg.utterance_id,
        )
