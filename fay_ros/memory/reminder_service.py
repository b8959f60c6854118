"""The reminder service's one dispatch (issue 36), no ROS: a `ReminderRequest` in, a
`ReminderAnswer` out, over one `ReminderBook`.

The memory node serves it as `memory/reminders` (fay_msgs/srv/Reminders: the same fields), the
dialogue and `fay-ros mcp` call it through `ros_side.reminder_gateway`, and tests without a
graph call `LocalReminders` (the same dispatch, in-process, on a real store). The actions and
their fields are listed in fay_msgs/srv/Reminders.srv.

Errors are answers, never exceptions: a refused add (a guest, a time in the past, a bad zone
or rule) is `success=False` with the reason in `message`, so a spoken question or a CLI line
can be made of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from .reminder_book import (
    Commitment,
    FollowupPolicy,
    Reminder,
    ReminderBook,
    ReminderError,
)

ACTIONS = (
    "add",
    "list",
    "cancel",
    "snooze",
    "acknowledge",
    "change",
    "due",
    "said",
    "overdue",
    "commit",
    "commitments",
    "commitment_done",
    "commitment_cancel",
    "clear",
    "followups",
    "followed_up",
)
KEEP_RULE = "-"  # `change`: leave the repeat rule as it is


@dataclass(frozen=True)
class ReminderRequest:
    action: str
    owner: str = ""
    id: str = ""
    text: str = ""
    tz: str = ""
    start_local: str = ""
    repeat: str = ""
    source_utterance: str = ""
    source_turn: str = ""
    # epoch seconds: snooze until, commitment due hint, overdue since; due/said/followups: the caller's now
    at: float = 0.0
    include_done: bool = False


@dataclass(frozen=True)
class ReminderAnswer:
    success: bool
    message: str = ""
    reminders: tuple[Reminder, ...] = ()
    commitments: tuple[Commitment, ...] = ()
    summary: str = ""
    times: tuple[int, ...] = field(default=())  # overdue: occurrences per reminder
    unavailable: bool = False  # the service did not answer (not running, too slow): nothing was done


class Reminders(Protocol):
    """What the dialogue, the agent tools and the MCP tools call (ROS or in-process)."""

    async def call(self, request: ReminderRequest) -> ReminderAnswer: ...


class ReminderDesk:
    """Serves `ReminderRequest`s on `book`. `default_tz`: the zone of an add without one (the
    node's); `policy`: the follow-up limit now (the schedule file can change)."""

    def __init__(
        self, book: ReminderBook, default_tz: str, policy: Callable[[], FollowupPolicy] = FollowupPolicy
    ) -> None:
        self.book = book
        self.default_tz = default_tz
        self.policy = policy

    def handle(self, request: ReminderRequest) -> ReminderAnswer:
        if request.action not in ACTIONS:
            return ReminderAnswer(False, f"unknown action {request.action!r} (one of: {', '.join(ACTIONS)})")
        if request.action != "due" and not request.owner:
            return ReminderAnswer(False, "a guest has no reminders: the request names no owner")
        try:
            return getattr(self, f"_{request.action}")(request)
        except ReminderError as exc:
            return ReminderAnswer(False, str(exc))

    # -- reminders
    def _add(self, r: ReminderRequest) -> ReminderAnswer:
        added = self.book.add(
            r.owner, r.tz or self.default_tz, r.start_local, r.repeat, r.text, r.source_utterance, r.source_turn
        )
        return ReminderAnswer(True, "added", (added,))

    def _list(self, r: ReminderRequest) -> ReminderAnswer:
        return ReminderAnswer(True, "", tuple(self.book.list(r.owner, include_done=r.include_done)))

    def _cancel(self, r: ReminderRequest) -> ReminderAnswer:
        found = self.book.get(r.owner, r.id)
        if found is None or not self.book.cancel(r.owner, r.id):
            return ReminderAnswer(False, f"no active reminder {r.id!r}")
        return ReminderAnswer(True, "cancelled", (found,))

    def _snooze(self, r: ReminderRequest) -> ReminderAnswer:
        snoozed = self.book.snooze(r.owner, r.id, r.at)
        if snoozed is None:
            return ReminderAnswer(False, f"no active reminder {r.id!r}")
        return ReminderAnswer(True, "snoozed", (snoozed,))

    def _acknowledge(self, r: ReminderRequest) -> ReminderAnswer:
        done = self.book.acknowledge(r.owner, r.id)
        if done is None:
            return ReminderAnswer(False, f"no active reminder {r.id!r}")
        return ReminderAnswer(True, "acknowledged", (done,))

    def _change(self, r: ReminderRequest) -> ReminderAnswer:
        changed = self.book.change(
            r.owner,
            r.id,
            start_local=r.start_local or None,
            text=r.text or None,
            rrule=None if r.repeat == KEEP_RULE else r.repeat,
        )
        if changed is None:
            return ReminderAnswer(False, f"no active reminder {r.id!r}")
        return ReminderAnswer(True, "changed", (changed,))

    def _now(self, r: ReminderRequest) -> float:
        """The caller's clock when it sends one (`at`): the runner that says a reminder decides
        when it is due by its own clock, which on a loaded graph can trail or lead this node's."""
        return r.at or self.book.clock()

    def _due(self, r: ReminderRequest) -> ReminderAnswer:
        return ReminderAnswer(True, "", tuple(self.book.due(self._now(r))))

    def _said(self, r: ReminderRequest) -> ReminderAnswer:
        found = self.book.get(r.owner, r.id)
        if found is None:
            return ReminderAnswer(False, f"no reminder {r.id!r}")
        moved = self.book.advance(found, self._now(r))
        if moved is None:
            return ReminderAnswer(False, f"reminder {r.id!r} changed meanwhile")
        return ReminderAnswer(True, moved.status, (moved,))

    def _overdue(self, r: ReminderRequest) -> ReminderAnswer:
        summary = self.book.overdue_summary(r.owner, r.at, self.book.clock())
        return ReminderAnswer(
            True,
            f"{len(summary.items)} overdue",
            tuple(i.reminder for i in summary.items),
            summary=summary.text(),
            times=tuple(i.times for i in summary.items),
        )

    # -- commitments
    def _commit(self, r: ReminderRequest) -> ReminderAnswer:
        item = self.book.add_commitment(r.owner, r.text, r.at, r.source_turn)
        return ReminderAnswer(True, "committed", commitments=(item,))

    def _commitments(self, r: ReminderRequest) -> ReminderAnswer:
        return ReminderAnswer(
            True, "", commitments=tuple(self.book.commitments(r.owner, include_closed=r.include_done))
        )

    def _closed(self, r: ReminderRequest, close: Callable[[str, str], bool], what: str) -> ReminderAnswer:
        found = [c for c in self.book.commitments(r.owner) if c.id == r.id]
        if not found or not close(r.owner, r.id):
            return ReminderAnswer(False, f"no open commitment {r.id!r}")
        return ReminderAnswer(True, what, commitments=tuple(found))

    def _commitment_done(self, r: ReminderRequest) -> ReminderAnswer:
        return self._closed(r, self.book.commitment_done, "done")

    def _commitment_cancel(self, r: ReminderRequest) -> ReminderAnswer:
        return self._closed(r, self.book.cancel_commitment, "cancelled")

    def _clear(self, r: ReminderRequest) -> ReminderAnswer:
        return ReminderAnswer(True, f"{self.book.cancel_open(r.owner)} open commitments cancelled")

    def _followups(self, r: ReminderRequest) -> ReminderAnswer:
        found = self.book.followup_candidates(r.owner, self._now(r), self.policy())
        return ReminderAnswer(True, "", commitments=tuple(found))

    def _followed_up(self, r: ReminderRequest) -> ReminderAnswer:
        if not self.book.record_followup(r.owner, r.id, self._now(r)):
            return ReminderAnswer(False, f"no open commitment {r.id!r}")
        return ReminderAnswer(True, "recorded")


class LocalReminders:
    """The `Reminders` port in-process (tests, a dialogue without a graph)."""

    def __init__(self, desk: ReminderDesk) -> None:
        self.desk = desk

    async def call(self, request: ReminderRequest) -> ReminderAnswer:
        return self.desk.handle(request)
