"""The part of an ActionCue the body consumers read, as a plain value (no ROS types)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Cue:
    behavior: str
    affect: str
    intensity: float = 0.5
    priority: int = 0
    sentiment: float = 0.0
    utterance_id: str = ""

    @classmethod
    def from_message(cls, msg: object) -> "Cue":
        """From a fay_msgs/ActionCue (read by attribute, so this module needs no ROS import)."""
        return cls(behavior=msg.behavior, affect=msg.affect, intensity=float(msg.intensity),  # type: ignore[attr-defined]
                   priority=int(msg.priority), sentiment=float(msg.sentiment),  # type: ignore[attr-defined]
                   utterance_id=msg.utterance_id)  # type: ignore[attr-defined]
