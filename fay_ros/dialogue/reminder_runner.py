"""Saying reminders when they fall due, and following up open commitments (issue 36), no ROS.

The proactive scheduler's tick (ros_side.proactive_talk, on the node clock) calls
`ReminderRunner.tick(now, speaking=..., present=...)` on the engine's loop; the runner looks at
the memory's reminders (the `Reminders` port: the memory node's `memory/reminders`) and says
what is due through `speak(user, line)`: the dialogue's normal reply path for lines the
companion starts (sanitiser, visemes, cues, recorded as its words).

- Never while someone speaks (`speaking`: the user's voice or the robot's); a due reminder
  waits for the next tick. One line per tick: the next waits for that line's speech to end.
- Said, it is reported back (`said`): the memory says it again every few minutes until the
  user acknowledges it (the dialogue's ReminderTalk hears "ok", "snooze", "再过十分钟"), then
  marks it missed (memory.reminder_book).
- After a start: what fell due more than `late_after` seconds before the first look and was
  never said (the graph was down) is said once per owner as one short summary (`overdue`), not
  fired one by one and not dropped. The summary waits for its owner to be present (heard
  lately): nobody may be in the room when the graph comes up, and a line said before the voice
  is listening is lost. Until then that owner's reminders wait with it.
- Quiet hours do not hold a reminder: the user asked for that time. They do hold follow-ups.
- Every `followup_every` seconds, when a user is present and nobody speaks, one open
  commitment of theirs whose time has come is followed up ("Did you call the dentist?"); the
  memory keeps the limit (3 per owner per hour, 50 minutes per commitment, quiet hours).
- Without the memory node the runner waits and reports `unavailable` once.

`tick` returns what it did as `RunnerEvent`s (for `dialogue/proactive`): ids and users, never
what was said.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from ..memory.reminder_book import Commitment, Reminder
from ..memory.reminder_service import ReminderRequest, Reminders

log = logging.getLogger(__name__)

LATE_AFTER = 60.0  # seconds overdue at the first look: it fell due while nobody was there
FOLLOWUP_EVERY = 60.0  # seconds of node clock between two looks for a follow-up

# speak(user, line) -> the conversation id of the line started, "" when not started (a turn runs)
Speak = Callable[[str, str], str]


class Lines(Protocol):
    """What the runner says (dialogue.reminder_talk.ReminderTalk), and who it tells it said it."""

    def said(self, user_id: str, reminder: Reminder, at: float) -> None: ...
    def due_line(self, reminder: Reminder) -> str: ...
    def overdue_line(self, owner: str, reminders: list[Reminder], times: list[int]) -> str: ...
    def followup_line(self, commitment: Commitment) -> str: ...


@dataclass(frozen=True)
class RunnerEvent:
    event: str  # reminder | overdue | followup | waiting | unavailable | available
    user: str = ""
    ids: tuple[str, ...] = ()
    conversation_id: str = ""
    reason: str = ""


class ReminderRunner:
    def __init__(
        self,
        reminders: Reminders,
        lines: Lines,
        speak: Speak,
        late_after: float = LATE_AFTER,
        followup_every: float = FOLLOWUP_EVERY,
        busy: Callable[[str], bool] = lambda _user: False,
    ) -> None:
        self.reminders = reminders
        self.busy = busy  # busy(user): their turn is running (a line would not be said now)
        self.lines = lines
        self.speak = speak
        self.late_after = late_after
        self.followup_every = followup_every
        self._busy = False
        self._first_look = True
        self._overdue_owners: set[str] = set()  # owners whose overdue summary waits for them
        self._available: bool | None = None
        self._next_followup_look = float("-inf")
        self._waiting: tuple[str, ...] = ()

    async def tick(self, now: float, *, speaking: bool, present: str = "") -> list[RunnerEvent]:
        """One look at `now` (node clock, epoch seconds); `present`: the user heard lately ('' = none)."""
        if self._busy:  # the last look is still waiting for the memory: no second one beside it
            return []
        self._busy = True
        try:
            return await self._look(now, speaking, present)
        finally:
            self._busy = False

    async def _look(self, now: float, speaking: bool, present: str) -> list[RunnerEvent]:
        events: list[RunnerEvent] = []
        due = await self.reminders.call(ReminderRequest("due", at=now))
        if not due.success:
            if self._available is not False:
                events.append(RunnerEvent("unavailable", reason=due.message))
                log.warning("reminders are not said for now: %s", due.message)
            self._available = False
            return events
        if self._available is False:
            events.append(RunnerEvent("available"))
        self._available = True
        pending = list(due.reminders)
        if self._first_look:
            self._first_look = False
            late = [r for r in pending if r.attempts == 0 and r.next_due_utc < now - self.late_after]
            self._overdue_owners = {r.owner for r in late}
        if self._overdue_owners:
            if present in self._overdue_owners and not speaking and not self.busy(present):
                self._overdue_owners.discard(present)
                return events + await self._overdue(present)
            pending = [r for r in pending if r.owner not in self._overdue_owners]  # they wait for the summary
        waiting = tuple(r.id for r in pending)
        if speaking:
            if waiting and waiting != self._waiting:
                events.append(RunnerEvent("waiting", ids=waiting, reason="speaking"))
            self._waiting = waiting
            return events
        self._waiting = ()
        if pending:
            events += await self._say(pending[0], now)
            return events  # one line per tick: the next waits for this one's speech
        if present and now >= self._next_followup_look:
            self._next_followup_look = now + self.followup_every
            events += await self._follow_up(present, now)
        return events

    async def _say(self, reminder: Reminder, now: float) -> list[RunnerEvent]:
        conversation_id = self.speak(reminder.owner, self.lines.due_line(reminder))
        if not conversation_id:
            return [RunnerEvent("waiting", reminder.owner, (reminder.id,), reason="user_turn")]
        answer = await self.reminders.call(ReminderRequest("said", reminder.owner, reminder.id, at=now))
        if not answer.success:
            log.warning("reminder %s was said but not recorded as said: %s", reminder.id, answer.message)
        self.lines.said(reminder.owner, reminder, now)
        return [RunnerEvent("reminder", reminder.owner, (reminder.id,), conversation_id, answer.message)]

    async def _overdue(self, owner: str) -> list[RunnerEvent]:
        answer = await self.reminders.call(ReminderRequest("overdue", owner, at=0.0))
        if not answer.success:
            self._overdue_owners.add(owner)  # the next look tries again
            return []
        if not answer.reminders:
            return []
        line = self.lines.overdue_line(owner, list(answer.reminders), list(answer.times))
        conversation_id = self.speak(owner, line)
        if not conversation_id:  # consumed but not said: the user's turn started in between
            log.warning("the summary of %s's overdue reminders was not said (their turn was running)", owner)
        return [RunnerEvent("overdue", owner, tuple(r.id for r in answer.reminders), conversation_id)]

    async def _follow_up(self, user: str, now: float) -> list[RunnerEvent]:
        answer = await self.reminders.call(ReminderRequest("followups", user, at=now))
        if not answer.success or not answer.commitments:
            return []
        commitment = answer.commitments[0]
        conversation_id = self.speak(user, self.lines.followup_line(commitment))
        if not conversation_id:
            return []
        await self.reminders.call(ReminderRequest("followed_up", user, commitment.id, at=now))
        return [RunnerEvent("followup", user, (commitment.id,), conversation_id)]
