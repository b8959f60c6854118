"""The memory node's background work: which LLM job to run, and when.

Reflection and portrait rebuilds call an LLM, so the node runs them on one worker thread and
no service call waits for them. This core decides; the node only submits what it is given
and logs the report of each run:

- a job (reflect / rebuild the portrait) waits in the queue at most once per owner: asking
  again while it waits adds nothing. Asking while it runs is remembered, and when it ends the
  question is asked again: the running job may have read the owner's memories before the
  write that asked (the follow-up of its report);
- after the LLM failed for an owner, none of that owner's LLM jobs is queued for
  `llm_backoff` seconds, so an unreachable LLM costs one log line a minute per owner;
- reflection is due after a write when the importance of the owner's new memories passed the
  threshold, and every `reflection_period` seconds (0 = never) for each owner with enough new
  memories;
- without an LLM a due portrait is the plain summary: cheap, so it is rebuilt at once, on the
  caller's thread, and the answer already has it.

Thread-safe: services and timers (executor threads) ask, the worker reports.
"""
from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass
from typing import Callable, Literal

from ..dialogue.llm import LlmError
from .service import MemoryService

REFLECT = "reflect"
PROFILE = "profile"
LLM_BACKOFF_SECONDS = 60.0


@dataclass(frozen=True)
class Job:
    kind: str  # REFLECT | PROFILE
    owner: str


@dataclass(frozen=True)
class JobReport:
    """What became of a job, for the log: "warning" when the LLM failed (skipped, backing
    off), "error" for anything else that went wrong."""
    job: Job
    level: Literal["info", "warning", "error"]
    message: str
    follow_up: tuple[Job, ...] = ()  # to submit next


class BackgroundScheduler:
    def __init__(self, service: MemoryService, *, reflection_period: float = 0.0,
                 llm_backoff: float = LLM_BACKOFF_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.service = service
        self.reflection_period = reflection_period
        self.llm_backoff = llm_backoff
        self.clock = clock
        self._lock = threading.Lock()
        self._waiting: set[Job] = set()  # handed out, not started
        self._running: set[Job] = set()
        self._asked_while_running: set[Job] = set()
        self._backoff_until: dict[str, float] = {}
        self._last_scheduled_reflection = clock()

    # ------------------------------------------------------------------ what to run
    def after_write(self, owner: str) -> list[Job]:
        """A memory of the owner was written: reflect if enough importance has gathered."""
        if self._backing_off(owner) or not self.service.reflection_due(owner):
            return []
        return self._enqueue(Job(REFLECT, owner))

    def profile_requested(self, owner: str) -> list[Job]:
        """The owner's profile was asked for: rebuild the portrait if enough evidence has come."""
        if not self.service.profile_due(owner):
            return []
        if not self.service.llm_configured:
            self.service.rebuild_profile(owner)  # the plain summary: cheap, and this answer gets it
            return []
        if self._backing_off(owner):
            return []
        return self._enqueue(Job(PROFILE, owner))

    def tick(self) -> list[Job]:
        """Called periodically: scheduled reflection for every owner with enough new memories."""
        if self.reflection_period <= 0 or not self.service.llm_configured:
            return []
        now = self.clock()
        with self._lock:
            if now - self._last_scheduled_reflection < self.reflection_period:
                return []
            self._last_scheduled_reflection = now
        jobs: list[Job] = []
        for owner in self.service.owners():
            if not self._backing_off(owner) and self.service.reflection_has_material(owner):
                jobs += self._enqueue(Job(REFLECT, owner))
        return jobs

    # ------------------------------------------------------------------ running
    def run(self, job: Job) -> JobReport:
        """Run a job the scheduler handed out (on the worker thread) and report back."""
        with self._lock:
            self._waiting.discard(job)
            self._running.add(job)
        try:
            report = self._execute(job)
        finally:
            with self._lock:
                self._running.discard(job)
                asked_again = job in self._asked_while_running
                self._asked_while_running.discard(job)
        if not asked_again:
            return report
        try:
            follow_up = self.after_write(job.owner) if job.kind == REFLECT else self.profile_requested(job.owner)
        except Exception as exc:  # noqa: BLE001 - the report of the job itself still counts
            return dataclasses.replace(report, message=f"{report.message}; checking for more work failed: "
                                                       f"{type(exc).__name__}")
        return dataclasses.replace(report, follow_up=tuple(follow_up))

    def _execute(self, job: Job) -> JobReport:
        try:
            if job.kind == REFLECT:
                insights = self.service.reflect(job.owner)
                return JobReport(job, "info", f"reflection for owner={job.owner!r}: {len(insights)} insights stored")
            if job.kind == PROFILE:
                self.service.rebuild_profile(job.owner)
                return JobReport(job, "info", f"portrait of owner={job.owner!r} rebuilt")
            return JobReport(job, "error", f"unknown job {job.kind!r} for owner={job.owner!r}")
        except LlmError as exc:
            with self._lock:
                self._backoff_until[job.owner] = self.clock() + self.llm_backoff
            return JobReport(job, "warning", f"{job.kind} for owner={job.owner!r} skipped: {exc}")
        except Exception as exc:  # noqa: BLE001 - one failed job must not stop the worker
            return JobReport(job, "error", f"{job.kind} for owner={job.owner!r} failed: {type(exc).__name__}")

    # ------------------------------------------------------------------ internals
    def _backing_off(self, owner: str) -> bool:
        with self._lock:
            return self.clock() < self._backoff_until.get(owner, 0.0)

    def _enqueue(self, job: Job) -> list[Job]:
        with self._lock:
            if job in self._running:
                self._asked_while_running.add(job)
                return []
            if job in self._waiting:
                return []
            self._waiting.add(job)
        return [job]
