"""Background tasks (Fay's ExecutionManager): a tool loop that runs while the user talks on.

Fay's dual-model mode hands the tool loop to a background thread (`exec_mgr.submit()`), the
turn returns at once, and `on_complete` streams the final reply into the original
conversation. Here a task is an asyncio task on the engine's loop:

- at most one RUNNING task per user; `submit` refuses a second one (`TaskBusy`), as Fay's
  `ExecutionManager.submit` does;
- `update(user, text)` adds an instruction the next tool-loop step sees (`instructions()`);
- `cancel(user)` cancels the asyncio task: the running tool gets CancelledError and must
  clean up (a ROS action tool cancels its goal);
- every change of state and every tool-loop step is reported through `on_progress`
  (the node publishes it on `task/progress`);
- when the task ends, `on_done(task)` is called on the loop (the engine then speaks the
  result as a new reply stream of the original conversation, source "task").

Pure asyncio, no ROS.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..common.errors import FayError

log = logging.getLogger("fay_ros.dialogue")

RUNNING, COMPLETED, CANCELLED, FAILED = "running", "completed", "cancelled", "failed"


class TaskBusy(FayError):
    """The user already has a running background task."""


@dataclass(frozen=True)
class TaskProgress:
    """One progress report (the node turns it into a DiagnosticStatus on `task/progress`)."""

    user_id: str
    task_id: str
    conversation_id: str
    state: str  # running, completed, cancelled, failed
    step: int  # tool-loop steps finished so far
    tool: str  # the tool running now (or the last one run)
    elapsed: float  # seconds since the task started
    detail: str = ""  # e.g. the error of a failed task (never tool arguments or results)


@dataclass
class BackgroundTask:
    user_id: str
    conversation_id: str
    question: str
    language: str
    next_seq: int  # the seq the completion stream starts at (after the reply that started the task)
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    started_at: float = field(default_factory=time.monotonic)
    state: str = RUNNING
    step: int = 0
    tool: str = ""
    updates: list[str] = field(default_factory=list)  # instructions the user added while it ran
    result: Any = None  # what the work returned (the tool loop's results)
    error: BaseException | None = None
    future: asyncio.Task | None = None

    def instructions(self) -> list[str]:
        """The user's added instructions, oldest first (read by each tool-loop step)."""
        return list(self.updates)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started_at

    def progress(self, detail: str = "") -> TaskProgress:
        return TaskProgress(
            self.user_id, self.id, self.conversation_id, self.state, self.step, self.tool, self.elapsed, detail
        )


Work = Callable[[BackgroundTask], Awaitable[Any]]


class TaskManager:
    def __init__(self, on_progress: Callable[[TaskProgress], None] | None = None) -> None:
        self.on_progress = on_progress
        self._running: dict[str, BackgroundTask] = {}
        self._all: set[asyncio.Task] = set()

    def running(self, user_id: str) -> BackgroundTask | None:
        task = self._running.get(user_id)
        return task if task is not None and task.state == RUNNING else None

    def submit(self, task: BackgroundTask, work: Work, on_done: Callable[[BackgroundTask], None]) -> BackgroundTask:
        """Start `work(task)` in the background; TaskBusy when the user has a running task."""
        current = self.running(task.user_id)
        if current is not None:
            raise TaskBusy(f"user {task.user_id or 'guest'!r} already has running task {current.id}")
        self._running[task.user_id] = task

        async def body() -> None:
            try:
                task.result = await work(task)
                task.state = COMPLETED
            except asyncio.CancelledError:
                task.state = CANCELLED
                raise
            except Exception as exc:  # noqa: BLE001 - reported to the user by on_done
                task.state, task.error = FAILED, exc
            finally:
                if self._running.get(task.user_id) is task:
                    del self._running[task.user_id]
                self.report(task, f"{type(task.error).__name__}" if task.error else "")
                try:
                    on_done(task)
                except Exception:  # noqa: BLE001 - a broken callback must not hide the task's end
                    log.exception("completion of background task %s failed", task.id)

        task.future = asyncio.ensure_future(body())
        self._all.add(task.future)
        task.future.add_done_callback(self._all.discard)
        self.report(task)
        return task

    def step(self, task: BackgroundTask, step: int, tool: str) -> None:
        """The tool loop is at `step` (steps finished), running `tool`."""
        task.step, task.tool = step, tool
        self.report(task)

    def update(self, user_id: str, text: str) -> BackgroundTask | None:
        task = self.running(user_id)
        if task is not None:
            task.updates.append(text)
            self.report(task, "instructions updated")
        return task

    def cancel(self, user_id: str) -> BackgroundTask | None:
        """Cancel the user's running task. Its slot is free at once (a replacing task may start
        while the cancelled one still unwinds); its end is reported as usual."""
        task = self.running(user_id)
        if task is not None and task.future is not None:
            task.future.cancel()
            del self._running[user_id]
        return task

    def cancel_all(self) -> int:
        """Shutdown: cancel every running task."""
        tasks = [t for t in self._running.values() if t.future is not None and not t.future.done()]
        for task in tasks:
            assert task.future is not None
            task.future.cancel()
        return len(tasks)

    async def settle(self) -> None:
        while self._all:
            await asyncio.gather(*list(self._all), return_exceptions=True)

    def report(self, task: BackgroundTask, detail: str = "") -> None:
        if self.on_progress is not None:
            try:
                self.on_progress(task.progress(detail))
            except Exception:  # noqa: BLE001 - a broken publisher must not break the task
                log.exception("progress report of task %s failed", task.id)
