"""Audio lost before anyone heard it, for the mic's `capture` status on /diagnostics: input
overflows (the sound card's buffer filled while the process was too busy to read it: PortAudio's
input_overflow flag) and chunks a busy worker dropped. Words in that audio were never heard, and
nothing else would say so."""

from __future__ import annotations

import math

RECENT_S = 10.0  # audio lost this recently makes the status a warning


class AudioLoss:
    """Tracks the two loss counters and when either last grew."""

    def __init__(self, recent_s: float = RECENT_S) -> None:
        self.recent_s = recent_s
        self._seen = 0
        self._grew_at = -math.inf

    def status(self, overflows: int, dropped: int, now: float) -> tuple[str, str, dict[str, str]]:
        """(level, message, values) with the counters as they are at `now` (monotonic seconds)."""
        if overflows + dropped > self._seen:
            self._seen, self._grew_at = overflows + dropped, now
        values = {"input_overflows": str(overflows), "dropped_chunks": str(dropped)}
        if now - self._grew_at < self.recent_s:
            return (
                "warning",
                f"audio lost: {overflows} input overflows, {dropped} chunks dropped "
                "(the machine was too busy to keep up with the microphone)",
                values,
            )
        if self._seen:
            return "ok", f"audio lost earlier ({self._seen} times), none in the last {self.recent_s:.0f} s", values
        return "ok", "no audio lost", values
