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
  threshold;
- scheduled jobs (`MemoryTimetable`, on the node clock): at `reflection_at` (the schedule
  file's daily time, Fay's 23:00) and every `reflection_period` seconds (the node parameter,
  0 = never) a reflection for each owner with enough new memories; at `portrait_at` (Fay's
  11:30) a portrait rebuild for each owner whose portrait is due (`profile_min_evidence` new
  turns, `profile_min_interval`), the same rule as when the profile is asked for;
- without an LLM a due portrait is the plain summary: cheap, so it is rebuilt at once, on the
  caller's thread, and the answer already has it (a scheduled one runs on the worker).

Thread-safe: services and timers (executor threads) ask, the worker reports.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import tzinfo
from typing import Literal

from ..llm.client import LlmError
from ..schedule.config import MemorySchedule
from ..schedule.timing import Firing, IntervalRule, TimeRule, TimeTriggers, daily_rule
from .service import MemoryService

REFLECT = "reflect"
PROFILE = "profile"
LLM_BACKOFF_SECONDS = 60.0
# The scheduled jobs by name (the schedule file's keys, and the node parameter) -> job kind.
PORTRAIT_AT, REFLECTION_AT, REFLECTION_PERIOD = "portrait_at", "reflection_at", "reflection_period"
SCHEDULED_KINDS = {PORTRAIT_AT: PROFILE, REFLECTION_AT: REFLECT, REFLECTION_PERIOD: REFLECT}


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
    def __init__(
        self,
        service: MemoryService,
        *,
        llm_backoff: float = LLM_BACKOFF_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`clock`: for the LLM back-off only (a span of real time, whatever the node clock says)."""
        self.service = service
        self.llm_backoff = llm_backoff
        self.clock = clock
        self._lock = threading.Lock()
        self._waiting: set[Job] = set()  # handed out, not started
        self._running: set[Job] = set()
        self._asked_while_running: set[Job] = set()
        self._backoff_until: dict[str, float] = {}

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

    def scheduled(self, kind: str) -> list[Job]:
        """A scheduled run of `kind` is due: the jobs for every owner that has work for it (a
        reflection: enough new memories and an LLM; a portrait: due by the profile rule)."""
        jobs: list[Job] = []
        for owner in self.service.owners():
            if self._backing_off(owner):
                continue
            if kind == REFLECT and self.service.llm_configured and self.service.reflection_has_material(owner):
                jobs += self._enqueue(Job(REFLECT, owner))
            elif kind == PROFILE and self.service.profile_due(owner):
                jobs += self._enqueue(Job(PROFILE, owner))
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
            return dataclasses.replace(
                report, message=f"{report.message}; checking for more work failed: {type(exc).__name__}"
            )
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


class MemoryTimetable:
    """When memory's scheduled jobs are due, on the node clock: `portrait_at` and
    `reflection_at` from the schedule file (daily, in its zone) and `reflection_period` (the
    node parameter, seconds). Start-up, coalescing and the clock going backwards follow
    `fay_ros.schedule.timing.TimeTriggers`. One caller (the node's timer)."""

    def __init__(self, schedule: MemorySchedule, zone: tzinfo, reflection_period: float = 0.0) -> None:
        self.reflection_period = reflection_period
        self._triggers = TimeTriggers()
        self.set_schedule(schedule, zone)

    def set_schedule(self, schedule: MemorySchedule, zone: tzinfo) -> None:
        """A new (reloaded) schedule: nothing of the past fires because of the change."""
        rules: dict[str, TimeRule] = {}
        if schedule.portrait_at:
            rules[PORTRAIT_AT] = daily_rule(schedule.portrait_at, zone)
        if schedule.reflection_at:
            rules[REFLECTION_AT] = daily_rule(schedule.reflection_at, zone)
        if self.reflection_period > 0:
            rules[REFLECTION_PERIOD] = IntervalRule(self.reflection_period)
        self.rules = rules
        self._triggers.set_rules(rules)

    def due(self, now: float) -> list[Firing]:
        """What is due at `now` (epoch seconds of the node clock); the job kind of a firing is
        SCHEDULED_KINDS[firing.name]."""
        return self._triggers.evaluate(now)

    def next_due(self) -> dict[str, float | None]:
        return self._triggers.next_due()
