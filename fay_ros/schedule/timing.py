"""Time rules and what became due between two looks at the clock.

Rules (one per trigger name):

- `CronRule`: a cron expression (5 fields or an @alias such as @daily), evaluated by croniter in
  the schedule's time zone. A daily "HH:MM" is the cron rule "MM HH * * *" (`daily_rule`).
  Daylight saving time: a wall-clock time the clock skips (spring) fires when the clock
  jumps over it (at 03:00 for 02:30 in Europe/Berlin); a wall-clock time that occurs twice
  (autumn) fires once, the first time, when the expression fixes the hour (a daily time, "0 12
  * * 1-5"); an expression with a wildcard hour ("*/15 * * * *") fires in both hours, as cron
  does.
- `IntervalRule`: every N seconds from the first look at the clock (node start), so a restart
  starts the count again.

`TimeTriggers.evaluate(now)` (now: epoch seconds of the node clock, which may be sim time):

- The first call only notes the time: start-up does not replay the day (a node started at
  23:10 does not run the 23:00 reflection).
- Afterwards each rule whose next occurrence is at or before `now` fires once, even when the
  clock jumped over several occurrences (coalesced: `Firing.skipped` counts the earlier ones,
  `Firing.due` is the latest one, so its lateness is `now - due`).
- The clock going backwards: a step back of at most `backwards_tolerance` seconds (an NTP
  correction, jitter) is waited out: nothing fires until the clock passes the time it had
  reached, so nothing fires twice. A bigger step back (sim time reset, a bag played again) is
  a new start: nothing fires for the jump itself and occurrences after the new time fire as
  usual.
- `set_rules` (hot reload) keeps the clock state: a rule added at 09:00 with daily 08:30 fires
  tomorrow, not now.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Protocol

from croniter import croniter

BACKWARDS_TOLERANCE = 300.0  # seconds; see the module docstring
MAX_COUNTED = 1000  # skipped occurrences counted at most (a year of "every: 1" is not walked through)


class TimeRule(Protocol):
    def next_after(self, t: float, anchor: float) -> float | None:
        """The first occurrence strictly after `t` (epoch seconds); None: never again.
        `anchor` is the time of the first look at the clock (for intervals)."""

    def latest_until(self, t: float, anchor: float) -> float | None:
        """The last occurrence at or before `t` (None: none since the anchor)."""

    def describe(self) -> str:
        """The rule as written, for logs."""


@dataclass(frozen=True)
class CronRule:
    expression: str
    zone: tzinfo
    text: str = ""  # how the file wrote it ("daily 08:30"), for logs; the expression when empty

    def next_after(self, t: float, anchor: float) -> float | None:
        it = croniter(self.expression, datetime.fromtimestamp(t, self.zone))
        for _ in range(3):  # a repeated wall time is skipped at most once in a row
            occurrence = it.get_next(datetime).timestamp()
            if not (self._fixed_hour and repeated_wall_time(occurrence, self.zone)):
                return occurrence
        return None  # pragma: no cover - cannot happen with a valid expression

    def latest_until(self, t: float, anchor: float) -> float | None:
        previous = croniter(self.expression, datetime.fromtimestamp(t, self.zone)).get_prev(datetime).timestamp()
        following = self.next_after(previous, anchor)
        return following if following is not None and following <= t else previous

    @property
    def _fixed_hour(self) -> bool:
        fields = self.expression.split()
        return self.expression.startswith("@") or (len(fields) >= 2 and "*" not in fields[1])

    def describe(self) -> str:
        return self.text or f"cron {self.expression!r}"


@dataclass(frozen=True)
class IntervalRule:
    seconds: float

    def next_after(self, t: float, anchor: float) -> float | None:
        steps = math.floor((t - anchor) / self.seconds) + 1
        occurrence = anchor + steps * self.seconds
        return occurrence if occurrence > t else occurrence + self.seconds

    def latest_until(self, t: float, anchor: float) -> float | None:
        if t < anchor + self.seconds:
            return None
        return anchor + math.floor((t - anchor) / self.seconds) * self.seconds

    def describe(self) -> str:
        return f"every {self.seconds:g} s"


def daily_rule(clock_time: str, zone: tzinfo) -> CronRule:
    """A daily "HH:MM" (already validated) as a cron rule."""
    hours, minutes = (int(part) for part in clock_time.split(":"))
    return CronRule(f"{minutes} {hours} * * *", zone, f"daily {clock_time}")


def repeated_wall_time(t: float, zone: tzinfo) -> bool:
    """`t` shows a wall-clock time that the zone showed already an hour earlier (the second
    pass through the hour repeated when daylight saving time ends)."""
    local = datetime.fromtimestamp(t, zone)
    first = local.replace(tzinfo=None).replace(tzinfo=zone, fold=0).timestamp()
    return first < t


def cron_problem(expression: str) -> str | None:
    """Why `expression` is no usable cron expression (None: it is)."""
    text = expression.strip()
    if not text.startswith("@") and len(text.split()) != 5:
        return "a cron expression has 5 fields: minute hour day-of-month month day-of-week (e.g. '0 12 * * 1-5')"
    try:
        croniter(text, datetime(2000, 1, 1)).get_next(datetime)
    except Exception as exc:  # noqa: BLE001 - croniter's errors (bad field, never occurs) become the message
        return f"not a valid cron expression: {exc}"
    return None


@dataclass(frozen=True)
class Firing:
    """A rule became due: `due` is its latest occurrence at or before the evaluation,
    `skipped` how many earlier ones were coalesced into this firing."""

    name: str
    due: float
    skipped: int = 0


class TimeTriggers:
    """What is due between two looks at the clock, for a set of named rules (see the module
    docstring for start-up, coalescing and the clock going backwards). Not thread-safe: one
    caller (a node timer) drives it."""

    def __init__(
        self, rules: Mapping[str, TimeRule] | None = None, *, backwards_tolerance: float = BACKWARDS_TOLERANCE
    ) -> None:
        self.backwards_tolerance = backwards_tolerance
        self._rules: dict[str, TimeRule] = dict(rules or {})
        self._next: dict[str, float | None] = {}
        self._last: float | None = None  # the latest time the clock reached
        self._anchor = 0.0

    @property
    def started(self) -> bool:
        return self._last is not None

    def set_rules(self, rules: Mapping[str, TimeRule]) -> None:
        """Replace the rules (hot reload). Each one's next occurrence counts from the time the
        clock has reached, so nothing of the past fires because of the change."""
        self._rules = dict(rules)
        if self._last is not None:
            self._plan(self._last)

    def next_due(self) -> dict[str, float | None]:
        """Each rule's next occurrence (None: never, or not started)."""
        return {name: self._next.get(name) for name in self._rules}

    def evaluate(self, now: float) -> list[Firing]:
        """The rules due at `now` (epoch seconds), oldest first."""
        if self._last is None or now < self._last - self.backwards_tolerance:
            self._last = self._anchor = now  # a start, or a new start after a big jump back
            self._plan(now)
            return []
        if now <= self._last:
            return []  # a small step back is waited out; the same time again is nothing new
        self._last = now
        firings = []
        for name, rule in self._rules.items():
            first = self._next.get(name)
            if first is None or first > now:
                continue
            due, skipped = first, 0
            following = rule.next_after(due, self._anchor)
            while following is not None and following <= now and skipped < MAX_COUNTED:
                due, skipped = following, skipped + 1
                following = rule.next_after(due, self._anchor)
            if following is not None and following <= now:  # counted enough: jump to the end
                due = rule.latest_until(now, self._anchor) or due
                following = rule.next_after(now, self._anchor)
            self._next[name] = following
            firings.append(Firing(name, due, skipped))
        return sorted(firings, key=lambda f: f.due)

    def _plan(self, after: float) -> None:
        self._next = {name: rule.next_after(after, self._anchor) for name, rule in self._rules.items()}
