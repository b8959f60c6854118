"""The recogniser's order rules: what the asr worker hands its core first, and when the audio
it is fed is behind the present.

- A barge-in goes to the core before the next item the worker takes, however much audio was
  queued before it arrived: the mic publishes `audio/barge_in` just before the audio it held,
  and that audio, queued first (another topic: DDS keeps no order between them), could end
  its utterance before the barge-in was seen (a "yeah" over the robot made a turn). Only the
  last barge-in counts (AsrCore.barged_in keeps one).
- A chunk is `behind` (AsrCore.feed: the early decode waits for the present) when more audio
  waits after it in the queue, or when its audio ended more than STALE_CHUNK_S before it is
  processed (the mic released the audio it held at a barge-in, or delivery lagged).

Pure logic, the time an argument; the asr node's callbacks call `barge_in`, its worker
`before_next` and `behind`.
"""

from __future__ import annotations

import collections

from .turn_timing import STALE_CHUNK_S


class BargeInsFirst:
    def __init__(self) -> None:
        # (a deque: appended from a subscription's thread, taken by the worker's, no lock)
        self._pending: collections.deque[float] = collections.deque(maxlen=1)

    def barge_in(self, at: float) -> None:
        """The mic's barge-in arrived at `at` (the clock the audio is stamped with)."""
        self._pending.append(at)

    def before_next(self) -> list[float]:
        """The barge-ins to hand to the core before the worker's next item (once)."""
        due = []
        while self._pending:
            due.append(self._pending.popleft())
        return due


def behind(queued: int, captured: float, seconds: float, now: float) -> bool:
    """A chunk captured at `captured`, `seconds` long, fed at `now` with `queued` items after
    it in the worker's queue, has audio after it already."""
    return queued > 0 or now - (captured + seconds) > STALE_CHUNK_S
