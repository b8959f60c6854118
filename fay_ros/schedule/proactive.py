"""Proactive talk: which trigger may speak now, and the state a node keeps for it.

`gate()` decides one due line, purely from its arguments, in this order:

1. quiet hours (at `now`, in the schedule's zone) → drop "quiet_hours";
2. a time trigger (daily / every / cron) while nobody was heard for `absent_after` seconds
   (or nobody at all since start) → drop "absent". Topic and silence triggers skip this check:
   the message (a person detected) or the turn before the silence is the sign of someone;
3. the target user's last proactive line less than `min_gap` ago, or `max_per_day` lines
   already today (the day in the schedule's zone) → drop "rate_limit";
4. more than `max_delay` seconds after it was due → drop "late" (it waited for speech to end
   that long, or the clock jumped: a good morning is not said at noon);
5. the user or the robot speaking → wait (ask again at the next tick);
6. else speak.

`ProactivePlanner` is what a node (the dialogue) holds: it turns the clock, the user's turns
and topic messages into due lines and passes each through the gate at every `tick()`:

    planner = ProactivePlanner(load_schedule(path))
    planner.heard(user, now)            # each user turn (speech/final, text_input)
    planner.event(topic_name, now)      # a message arrived on a topic of planner.topics()
    for decision in planner.tick(now, user_speaking=..., robot_speaking=...):
        decision.action == "speak" → say decision.say, or a reply to decision.prompt, to decision.user
        decision.action == "drop"  → report decision.reason
    planner.set_schedule(new)           # hot reload: history and clock state kept

A spoken decision counts for the rate limit at once (the node is expected to say it). `now`
is epoch seconds of the node clock (sim time works); the planner never reads a clock itself.
The clock going backwards follows `timing.TimeTriggers`: a small step back is waited out; a
big one (sim time reset) is a new start, and the planner forgets the users heard, the lines
said and the lines waiting (their times lie in a future that did not happen).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, time, tzinfo
from typing import Literal

from .config import ProactiveSchedule, ScheduleFile, TopicEvent, Trigger
from .timing import BACKWARDS_TOLERANCE, TimeTriggers

Action = Literal["speak", "wait", "drop"]
HISTORY_SECONDS = 2 * 86400.0  # lines older than this count for nothing (min_gap, today's count)


@dataclass(frozen=True)
class Verdict:
    action: Action
    reason: str = ""  # for "drop": quiet_hours | absent | rate_limit | late; for "wait": speaking


def in_quiet_hours(now: float, quiet: tuple[time, time] | None, zone: tzinfo) -> bool:
    """Whether `now` falls in [start, end) of the quiet hours (which may span midnight)."""
    if quiet is None:
        return False
    start, end = quiet
    clock = datetime.fromtimestamp(now, zone).time().replace(tzinfo=None)
    return start <= clock < end if start < end else clock >= start or clock < end


def gate(
    *,
    now: float,
    due: float,
    kind: str,
    settings: ProactiveSchedule,
    zone: tzinfo,
    speaking: bool,
    last_heard: float | None,
    history: Sequence[float],
) -> Verdict:
    """One due line of a trigger of `kind`; `history`: times of the proactive lines already said
    to its target user; `last_heard`: the last time any user was heard (None: never)."""
    if in_quiet_hours(now, settings.quiet, zone):
        return Verdict("drop", "quiet_hours")
    if (
        kind in ("daily", "every", "cron")
        and settings.absent_after > 0
        and (last_heard is None or now - last_heard > settings.absent_after)
    ):
        return Verdict("drop", "absent")
    if history and settings.min_gap > 0 and now - max(history) < settings.min_gap:
        return Verdict("drop", "rate_limit")
    if settings.max_per_day > 0:
        today = datetime.fromtimestamp(now, zone).date()
        if sum(1 for t in history if datetime.fromtimestamp(t, zone).date() == today) >= settings.max_per_day:
            return Verdict("drop", "rate_limit")
    if now - due > settings.max_delay:
        return Verdict("drop", "late")
    if speaking:
        return Verdict("wait", "speaking")
    return Verdict("speak")


@dataclass(frozen=True)
class Decision:
    """A due line the gate decided: "speak" (say `say`, or a reply to `prompt`, to `user`) or
    "drop" (`reason`)."""

    action: Literal["speak", "drop"]
    trigger: str
    kind: str  # daily | every | cron | topic | silence
    user: str
    due: float
    say: str = ""
    prompt: str = ""
    reason: str = ""


@dataclass
class _Due:
    trigger: Trigger
    user: str
    due: float


@dataclass
class _State:
    last_heard: float | None = None
    last_user: str = ""
    last_activity: float | None = None  # the later of the last user turn and the last speech seen
    silence_armed: set[str] = field(default_factory=set)
    history: dict[str, list[float]] = field(default_factory=dict)  # user -> times of proactive lines


class ProactivePlanner:
    """The proactive state of one node (see the module docstring). Not thread-safe: call it
    from one thread (or under one lock)."""

    def __init__(self, schedule: ScheduleFile) -> None:
        self._clock = TimeTriggers()
        self._state = _State()
        self._waiting: dict[str, _Due] = {}  # trigger name -> its due line (one per trigger)
        self._latest = float("-inf")  # the latest time seen by tick()
        self.set_schedule(schedule)

    @property
    def schedule(self) -> ScheduleFile:
        return self._schedule

    def set_schedule(self, schedule: ScheduleFile) -> None:
        """Use a new schedule (hot reload): the clock state, the users heard and the history of
        lines are kept; lines waiting for a trigger that is gone are forgotten."""
        self._schedule = schedule
        self._triggers = {t.name: t for t in schedule.proactive.triggers}
        rules = {t.name: rule for t in schedule.proactive.triggers if (rule := t.time_rule(schedule.zone)) is not None}
        self._clock.set_rules(rules)
        self._waiting = {name: due for name, due in self._waiting.items() if name in self._triggers}
        self._state.silence_armed &= set(self._triggers)

    def topics(self) -> list[TopicEvent]:
        """The topics the node should subscribe to (one entry per distinct name and type)."""
        seen: dict[tuple[str, str], TopicEvent] = {}
        for trigger in self._schedule.proactive.triggers:
            if trigger.topic is not None:
                seen.setdefault((trigger.topic.name, trigger.topic.type), trigger.topic)
        return list(seen.values())

    # ------------------------------------------------------------------ inputs
    def heard(self, user: str, now: float) -> None:
        """A user turn (its end): the user is present, the target of "" triggers, and every
        silence trigger is armed for this turn."""
        state = self._state
        state.last_heard, state.last_user = now, user
        state.last_activity = now
        state.silence_armed = {name for name, t in self._triggers.items() if t.silence is not None}

    def event(self, topic_name: str, now: float) -> None:
        """A message arrived on `topic_name`: every topic trigger on it is due now."""
        for trigger in self._triggers.values():
            if trigger.topic is not None and trigger.topic.name == topic_name:
                self._add(trigger, now)

    # ------------------------------------------------------------------ decisions
    def tick(self, now: float, *, user_speaking: bool = False, robot_speaking: bool = False) -> list[Decision]:
        """Everything decided at `now`: lines to speak and lines dropped (with the reason)."""
        if now < self._latest - BACKWARDS_TOLERANCE:
            self._state = _State()  # a new start: see the module docstring
            self._waiting.clear()
        self._latest = max(self._latest, now) if now >= self._latest - BACKWARDS_TOLERANCE else now
        state = self._state
        speaking = user_speaking or robot_speaking
        for firing in self._clock.evaluate(now):
            self._add(self._triggers[firing.name], firing.due)
        if speaking:
            state.last_activity = now
        elif state.last_activity is not None:
            for name in sorted(state.silence_armed):
                trigger = self._triggers[name]
                assert trigger.silence is not None
                if now - state.last_activity >= trigger.silence:
                    state.silence_armed.discard(name)
                    self._add(trigger, state.last_activity + trigger.silence)
        settings = self._schedule.proactive
        if not settings.enabled:
            self._waiting.clear()
            return []
        self._forget_old_history(now)
        decisions = []
        for name, due in sorted(self._waiting.items(), key=lambda item: item[1].due):
            history = state.history.setdefault(due.user, [])
            verdict = gate(
                now=now,
                due=due.due,
                kind=due.trigger.kind,
                settings=settings,
                zone=self._schedule.zone,
                speaking=speaking,
                last_heard=state.last_heard,
                history=history,
            )
            if verdict.action == "wait":
                continue
            del self._waiting[name]
            if verdict.action == "speak":
                history.append(now)
                decisions.append(
                    Decision(
                        "speak",
                        name,
                        due.trigger.kind,
                        due.user,
                        due.due,
                        say=due.trigger.say,
                        prompt=due.trigger.prompt,
                    )
                )
            else:
                decisions.append(Decision("drop", name, due.trigger.kind, due.user, due.due, reason=verdict.reason))
        return decisions

    def present_user(self, now: float) -> str:
        """The user heard last, while they count as present (heard within `absent_after`
        seconds; 0 = any time since start); '' = nobody."""
        state = self._state
        if state.last_heard is None or not state.last_user:
            return ""
        absent_after = self._schedule.proactive.absent_after
        if absent_after > 0 and now - state.last_heard > absent_after:
            return ""
        return state.last_user

    def waiting(self) -> dict[str, float]:
        """The due lines waiting for speech to end: trigger name -> when it became due."""
        return {name: due.due for name, due in self._waiting.items()}

    def next_due(self) -> dict[str, float | None]:
        """Each time trigger's next occurrence (for status displays)."""
        return self._clock.next_due()

    # ------------------------------------------------------------------ internals
    def _add(self, trigger: Trigger, due: float) -> None:
        user = trigger.user or self._state.last_user
        self._waiting[trigger.name] = _Due(trigger, user, due)  # a newer firing replaces a waiting one

    def _forget_old_history(self, now: float) -> None:
        for user, times in list(self._state.history.items()):
            kept = [t for t in times if now - t < HISTORY_SECONDS]
            if kept:
                self._state.history[user] = kept
            else:
                del self._state.history[user]
