"""The speculative reply's lifecycle, as decisions (the model call itself is the dialogue's:
fay_ros.dialogue.speculation).

The recogniser sends out what the person has probably finished saying before their final
(`speech/speculative`), and the dialogue starts the model on it: one guess is parked at a time.

- a new guess replaces the parked one (which is discarded: the person said more);
- the real turn's first model request claims the parked guess only when it is the very same
  request and the guess is not older than `max_age_s`; any other request discards it;
- a withdrawn guess (the person went on), or closing, discards it.

Pure logic, the time an argument; `P` is whatever the caller parks (the running stream).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

P = TypeVar("P")


@dataclass(frozen=True)
class Parked(Generic[P]):
    key: str  # what makes two requests the same request
    started: float  # when the guess's model request started
    payload: P


class SpeculativeReply(Generic[P]):
    def __init__(self, max_age_s: float = 10.0) -> None:
        self.max_age_s = max_age_s
        self.parked: Parked[P] | None = None

    def park(self, key: str, payload: P, now: float) -> P | None:
        """A guess's request runs ahead from `now`; returns the guess it replaces (to discard)."""
        replaced = self.discard()
        self.parked = Parked(key, now, payload)
        return replaced

    def claim(self, key: str, now: float) -> Parked[P] | None:
        """The real turn asks for `key`: the parked guess when it is that request and fresh
        enough (it is no longer parked), else None (the parked one stays: `discard` it)."""
        parked = self.parked
        if parked is not None and parked.key == key and now - parked.started <= self.max_age_s:
            self.parked = None
            return parked
        return None

    def discard(self) -> P | None:
        """Forget the parked guess; returns it (to cancel), or None."""
        parked, self.parked = self.parked, None
        return parked.payload if parked is not None else None
