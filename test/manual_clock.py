"""A hand-driven clock for tests of time-dependent cores (recency, expiry, profile intervals,
the audio player's schedule): the one copy; the `clock` fixture gives a fresh one."""

from __future__ import annotations


class Clock:
    def __init__(self, t: float = 1_800_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t
