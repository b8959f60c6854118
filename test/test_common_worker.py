"""BoundedWorker (fay_ros.common.worker), the queue + thread behind the mic and asr nodes:
bounded, drop-oldest with a counter, state items never dropped, a failing item does not end
the worker, stop() joins. The handler is held on an Event, so nothing depends on timing."""

from __future__ import annotations

import threading

import pytest

from fay_ros.common.worker import BoundedWorker
from harness import wait_until

WAIT = 10.0


class Handler:
    """Records items; holds the worker inside the first item until `release` is set."""

    def __init__(self, fail_on: object = None) -> None:
        self.items: list = []
        self.started = threading.Event()  # the worker is inside the first item
        self.release = threading.Event()
        self.fail_on = fail_on
        self.done = threading.Condition()

    def __call__(self, item) -> None:
        self.started.set()
        assert self.release.wait(WAIT), "the test never released the handler"
        if item == self.fail_on:
            raise RuntimeError(f"bad item {item}")
        with self.done:
            self.items.append(item)
            self.done.notify_all()

    def wait_for(self, count: int) -> list:
        with self.done:
            assert self.done.wait_for(lambda: len(self.items) >= count, WAIT), f"{count} items, have {self.items}"
            return list(self.items)


@pytest.fixture
def make_worker():
    workers = []

    def make(handler, maxsize=3, **kwargs) -> BoundedWorker:
        worker = BoundedWorker(handler, maxsize, "test-worker", **kwargs)
        workers.append((worker, handler))
        worker.start()
        return worker

    yield make
    for worker, handler in workers:
        handler.release.set()
        assert worker.stop(WAIT)


def test_a_full_queue_drops_the_oldest_item_and_counts_it(make_worker):
    handler = Handler()
    drops: list[int] = []
    worker = make_worker(handler, maxsize=3, on_drop=drops.append)
    worker.put("first")
    assert handler.started.wait(WAIT)  # the worker holds "first"; the queue is empty
    for i in range(6):
        worker.put(i)
    assert worker.pending() == 3, "the queue grew past its bound"
    assert worker.dropped == 3 and drops == [1, 2, 3]
    handler.release.set()
    assert handler.wait_for(4) == ["first", 3, 4, 5], "drop-oldest keeps the newest items"


def test_state_items_are_never_dropped(make_worker):
    handler = Handler()
    worker = make_worker(handler, maxsize=2)
    worker.put("first")
    assert handler.started.wait(WAIT)
    worker.put("state-a", droppable=False)
    worker.put(0)
    worker.put(1)  # full: 0 goes, not the state item before it
    worker.put("state-b", droppable=False)  # kept beyond the bound
    worker.put(2)  # full: 1 goes
    assert worker.dropped == 2
    handler.release.set()
    assert handler.wait_for(4) == ["first", "state-a", "state-b", 2]


def test_when_only_state_items_are_queued_the_new_item_is_the_one_dropped(make_worker):
    handler = Handler()
    worker = make_worker(handler, maxsize=1)
    worker.put("first")
    assert handler.started.wait(WAIT)
    worker.put("state", droppable=False)
    worker.put(0)
    assert worker.dropped == 1 and worker.pending() == 1
    handler.release.set()
    assert handler.wait_for(2) == ["first", "state"]


def test_an_exception_in_the_handler_costs_one_item_not_the_worker(make_worker):
    handler = Handler(fail_on="bad")
    errors: list[tuple] = []
    worker = make_worker(handler, maxsize=10, on_error=lambda item, exc: errors.append((item, str(exc))))
    handler.release.set()
    for item in ("a", "bad", "b"):
        worker.put(item)
    assert handler.wait_for(2) == ["a", "b"]
    assert errors == [("bad", "bad item bad")] and worker.failed == 1


def test_stop_joins_the_thread_and_discards_the_rest(make_worker):
    handler = Handler()
    worker = make_worker(handler, maxsize=10)
    worker.put("first")
    assert handler.started.wait(WAIT)
    worker.put("queued")
    stopper = threading.Thread(target=worker.stop, args=(WAIT,))
    stopper.start()
    wait_until(lambda: worker.pending() == 0, WAIT, message="stop() to empty the queue")
    handler.release.set()  # the item in hand finishes, then the thread ends
    stopper.join(WAIT)
    assert not stopper.is_alive() and worker.stop(WAIT)
    assert handler.items == ["first"], "queued items are discarded at stop"
    worker.put("late")
    assert worker.pending() == 0


def test_the_bound_must_be_positive():
    with pytest.raises(ValueError, match="maxsize must be at least 1"):
        BoundedWorker(lambda item: None, 0, "test-worker")
