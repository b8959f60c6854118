"""One worker thread behind one bounded queue, for node shells that must never block a
producer (a PortAudio callback, a ROS executor) on slow work (VAD, speech recognition).

Drop policy: drop-oldest. When the queue is full, the oldest droppable item is discarded
and counted, and the new one is queued: for live audio the newest audio is what the person
is saying now, and a worker that fell behind should catch up with it rather than keep
working through the past. Items put with `droppable=False` (state changes such as
"the robot started speaking") are never dropped; they may exceed the bound, which is
harmless because they are rare.

A failing handler costs one item, not the thread: the exception goes to `on_error` and the
worker takes the next item. `stop()` wakes the worker, joins it, and discards what is still
queued.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

Item = TypeVar("Item")

_log = logging.getLogger(__name__)


def _log_error(item: object, exc: Exception) -> None:
    _log.error("worker handler failed on %r: %s: %s", item, type(exc).__name__, exc)


class BoundedWorker(Generic[Item]):
    """`put(item)` queues `item` for `handler(item)`, run in order on one daemon thread."""

    def __init__(
        self,
        handler: Callable[[Item], None],
        maxsize: int,
        name: str,
        *,
        on_drop: Callable[[int], None] | None = None,
        on_error: Callable[[Item, Exception], None] = _log_error,
    ) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1 (got {maxsize})")
        self.maxsize = maxsize
        self.dropped = 0  # droppable items discarded because the queue was full
        self.failed = 0  # items whose handler raised
        self._handler = handler
        self._on_drop = on_drop
        self._on_error = on_error
        # (item, droppable) in arrival order
        self._items: collections.deque[tuple[Item, bool]] = collections.deque()
        self._droppable = 0  # how many queued items are droppable
        self._cond = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def put(self, item: Item, droppable: bool = True) -> None:
        """Queue `item`; never blocks. When the queue is full, the oldest droppable item is
        discarded (the new item itself when every queued one must be kept) and
        `on_drop(total dropped so far)` is called."""
        dropped_total = 0
        with self._cond:
            if self._stopping:
                return
            keep_new = True
            if droppable and len(self._items) >= self.maxsize:
                self.dropped += 1
                dropped_total = self.dropped
                if self._droppable:
                    self._remove_oldest_droppable()
                else:
                    keep_new = False
            if keep_new:
                self._items.append((item, droppable))
                self._droppable += droppable
                self._cond.notify()
        if dropped_total and self._on_drop is not None:
            self._on_drop(dropped_total)

    def _remove_oldest_droppable(self) -> None:
        for index, (_item, droppable) in enumerate(self._items):
            if droppable:
                del self._items[index]
                self._droppable -= 1
                return

    def pending(self) -> int:
        with self._cond:
            return len(self._items)

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop taking items, wake and join the worker (it finishes the item in hand); queued
        items are discarded. Returns whether the thread ended within `timeout`."""
        with self._cond:
            self._stopping = True
            self._items.clear()
            self._droppable = 0
            self._cond.notify()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._items and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
                item, droppable = self._items.popleft()
                self._droppable -= droppable
            try:
                self._handler(item)
            except Exception as exc:  # noqa: BLE001 - one bad item must not end the worker
                self.failed += 1
                self._on_error(item, exc)
