"""The reminder store (issue 36): reminders and open commitments per owner, no ROS.

Two kinds of things are kept apart (docs/reminders.md, "Storage"):

- A reminder is an explicit scheduled job ("remind me at 07:30 every weekday to take my
  pills"): a time zone (IANA name), the wall-clock time of its first occurrence
  (`start_local`, "YYYY-MM-DDTHH:MM:SS") and an RFC 5545 recurrence rule ('' = once).
  Repeats are computed on wall-clock time in the reminder's zone (python-dateutil's rrule over
  naive local times, each turned into an instant with zoneinfo), so 07:30 stays 07:30 across
  daylight-saving changes.
- A commitment is something the user said they would do ("I'll call the dentist tomorrow"):
  followed up proactively under a rate limit (`followup_verdict`), closed when done, cancelled
  when the conversation is cleared (`cancel_open`).

Life of a reminder (statuses):

    scheduled --(its time passes; the scheduler says it; advance)--> due
    due --(said again every `resay_after` s; advance)--> due ... --(max_says said)--> missed
    scheduled | due --acknowledge--> acknowledged   (a repeat: scheduled, at its next occurrence)
    scheduled | due --cancel--> cancelled
    scheduled | due --snooze(until)--> scheduled at `until`
    a repeat whose rule has no occurrence left --> done

A repeat that was said `max_says` times without acknowledgement is not missed as a whole: it
moves on to its next occurrence. What fell due while nobody was there to say it (the node was
down) is `overdue_summary`: one short summary per owner, then each one-shot is `missed` and
each repeat moves on, so nothing is dropped and nothing is fired one by one.

Every call names the owner, except `due(now)` (the scheduler's look across owners); a guest
('' owner) has no reminders or commitments. A row that cannot be read (a bad time zone,
start time or rule, written by hand or by another version) is reported with its id
(`ReminderBook.corrupt`, the `report` callback) and skipped; the other rows are served.
"""

from __future__ import annotations

import builtins
import logging
import re
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, tzinfo
from datetime import time as clock_time
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from dateutil.rrule import rrule as RRule
from dateutil.rrule import rrulestr

from ..common.errors import FayError
from ..schedule.config import parse_quiet_hours
from ..schedule.proactive import in_quiet_hours
from .reminder_tables import ReminderTables

log = logging.getLogger(__name__)

SCHEDULED, DUE, ACKNOWLEDGED, MISSED, CANCELLED, DONE = (
    "scheduled",
    "due",
    "acknowledged",
    "missed",
    "cancelled",
    "done",
)
STATUSES = (SCHEDULED, DUE, ACKNOWLEDGED, MISSED, CANCELLED, DONE)
ACTIVE = (SCHEDULED, DUE)
OPEN, CLOSED_DONE, CLOSED_CANCELLED = "open", "done", "cancelled"
COMMITMENT_STATUSES = (OPEN, CLOSED_DONE, CLOSED_CANCELLED)

LOCAL_FORMAT = "%Y-%m-%dT%H:%M:%S"
RESAY_AFTER = 300.0  # seconds between two says of a due reminder not acknowledged
MAX_SAYS = 3  # says of one occurrence without acknowledgement before it is missed
PAST_GRACE = 60.0  # a one-shot added at most this late (seconds) is still accepted, due now
_LOOKBACK = timedelta(hours=3)  # wall-clock margin when looking for the next occurrence (DST)
_MAX_COUNTED = 1000  # occurrences counted at most in an overdue summary


class ReminderError(FayError, ValueError):
    """A reminder or commitment that cannot be stored (bad zone, time, rule; no owner)."""


# ----------------------------------------------------------------------------- time logic
def zone(name: str) -> ZoneInfo:
    """The IANA zone `name` (ReminderError when unknown)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, TypeError) as exc:
        raise ReminderError(f"unknown time zone {name!r} (an IANA name such as Europe/London)") from exc


def parse_local(text: str) -> datetime:
    """A wall-clock time "YYYY-MM-DDTHH:MM[:SS]" (naive; no offset allowed)."""
    for fmt in (LOCAL_FORMAT, "%Y-%m-%dT%H:%M"):
        try:
            return datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
    raise ReminderError(f"bad local time {text!r}: write YYYY-MM-DDTHH:MM[:SS] (wall-clock, no offset)")


def parse_rule(text: str, start: datetime, where: tzinfo | None = None) -> RRule | None:
    """The recurrence rule `text` (RFC 5545 RRULE, with or without "RRULE:") anchored at the
    naive wall-clock `start`; None for '' (once). An UNTIL in UTC ("...Z") is read as the
    wall-clock time it is in `where` (the rule runs on wall-clock times)."""
    text = text.strip()
    if not text:
        return None
    body = text[len("RRULE:") :] if text.upper().startswith("RRULE:") else text
    if "\n" in body or "DTSTART" in body.upper():
        raise ReminderError(f"bad recurrence rule {text!r}: one RRULE line, without DTSTART")
    if where is not None:
        body = _UNTIL_UTC.sub(lambda m: "UNTIL=" + _local_until(m.group(1), where), body)
    try:
        rule = rrulestr(body, dtstart=start)
    except (ValueError, TypeError) as exc:
        raise ReminderError(f"bad recurrence rule {text!r}: {exc}") from exc
    if not isinstance(rule, RRule):
        raise ReminderError(f"bad recurrence rule {text!r}")
    return rule


_UNTIL_UTC = re.compile(r"UNTIL=(\d{8}T\d{6})Z", re.IGNORECASE)


def _local_until(utc_text: str, where: tzinfo) -> str:
    try:
        moment = datetime.strptime(utc_text, "%Y%m%dT%H%M%S").replace(tzinfo=UTC)
    except ValueError as exc:
        raise ReminderError(f"bad UNTIL {utc_text}Z") from exc
    return moment.astimezone(where).replace(tzinfo=None).strftime("%Y%m%dT%H%M%S")


def instant(local: datetime, where: tzinfo) -> float:
    """Epoch seconds of the naive wall-clock `local` in `where`. A time that occurs twice (the
    autumn change) is its first instant; a time the clock skips (spring) is the instant it
    would have been under the offset before the change (02:30 → 03:30 in Europe/Berlin)."""
    return local.replace(tzinfo=where, fold=0).timestamp()


def local_iso(seconds: float, where: tzinfo) -> str:
    return datetime.fromtimestamp(seconds, where).replace(tzinfo=None).strftime(LOCAL_FORMAT)


def next_occurrence(rule: RRule, where: tzinfo, after_utc: float, inclusive: bool = False) -> float | None:
    """The first occurrence of `rule` (naive wall-clock times in `where`) whose instant is after
    `after_utc` (or at it, `inclusive`); None when the rule has none left."""
    local_after = datetime.fromtimestamp(after_utc, where).replace(tzinfo=None) - _LOOKBACK
    for occurrence in rule.xafter(local_after, inc=True):
        at = instant(occurrence, where)
        if at > after_utc or (inclusive and at == after_utc):
            return at
    return None


def occurrences_between(rule: RRule, where: tzinfo, since_utc: float, until_utc: float) -> builtins.list[float]:
    """Instants of `rule` in [since_utc, until_utc) (at most _MAX_COUNTED)."""
    out: builtins.list[float] = []
    at = next_occurrence(rule, where, since_utc, inclusive=True)
    while at is not None and at < until_utc and len(out) < _MAX_COUNTED:
        out.append(at)
        at = next_occurrence(rule, where, at)
    return out


def _first_due(start: datetime, where: ZoneInfo, tz: str, rrule: str, now: float) -> float:
    """The first due instant of a reminder starting at wall-clock `start` in `where`: a one-shot's
    own (ReminderError when it is past, beyond PAST_GRACE), a repeat's first occurrence not
    before now (ReminderError when the rule has none left)."""
    rule = parse_rule(rrule, start, where)
    if rule is None:
        first = instant(start, where)
        if first < now - PAST_GRACE:
            raise ReminderError(f"{start.strftime(LOCAL_FORMAT)} in {tz} is in the past")
        return first
    found = next_occurrence(rule, where, max(now, instant(start, where)), inclusive=True)
    if found is None:
        raise ReminderError(f"the rule {rrule!r} has no occurrence after now")
    return found


# ----------------------------------------------------------------------------- records
@dataclass(frozen=True)
class Reminder:
    id: str
    owner: str
    tz: str
    start_local: str
    rrule: str
    next_due_utc: float
    status: str
    snoozed_until_utc: float
    attempts: int
    text: str
    source_utterance: str
    source_turn: str
    created: float
    updated: float

    @property
    def repeats(self) -> bool:
        return bool(self.rrule.strip())

    @property
    def due_local(self) -> str:
        """The next due time as wall-clock ISO in the reminder's zone."""
        return local_iso(self.next_due_utc, zone(self.tz))

    def row(self) -> dict:
        return dict(vars(self))

    def as_json(self) -> dict:
        """The CLI's and the dialogue's view: id, text, due (local ISO in its tz), tz, repeat, status."""
        return {
            "id": self.id,
            "text": self.text,
            "due": self.due_local,
            "tz": self.tz,
            "repeat": self.rrule,
            "status": self.status,
        }


@dataclass(frozen=True)
class Commitment:
    id: str
    owner: str
    text: str
    due_hint_utc: float
    status: str
    followups: int
    last_followup_utc: float
    source_turn: str
    created: float

    def row(self) -> dict:
        return dict(vars(self))


@dataclass(frozen=True)
class OverdueItem:
    reminder: Reminder  # as it was before the summary
    times: int  # occurrences that fell due while nobody said them (1 for a one-shot)
    first_due_utc: float
    last_due_utc: float


@dataclass(frozen=True)
class OverdueSummary:
    """What fell due for one owner while nobody was there to say it: said once, as one line."""

    owner: str
    items: tuple[OverdueItem, ...]

    def __bool__(self) -> bool:
        return bool(self.items)

    def text(self, limit: int = 3) -> str:
        """One short English line (the dialogue may phrase its own from `items`)."""
        if not self.items:
            return ""
        names = [i.reminder.text + (f" ({i.times} times)" if i.times > 1 else "") for i in self.items[:limit]]
        more = len(self.items) - limit
        tail = f" and {more} more" if more > 0 else ""
        count = len(self.items)
        return f"While I was away, {count} reminder{'s' if count > 1 else ''} fell due: {'; '.join(names)}{tail}."


def _check(row: dict) -> tuple[Reminder, ZoneInfo, RRule | None]:
    reminder = Reminder(**row)
    where = zone(reminder.tz)
    start = parse_local(reminder.start_local)
    rule = parse_rule(reminder.rrule, start, where)
    if reminder.status not in STATUSES:
        raise ReminderError(f"unknown status {reminder.status!r}")
    return reminder, where, rule


# ----------------------------------------------------------------------------- follow-up limit
@dataclass(frozen=True)
class FollowupPolicy:
    """Seed 003's limit on proactive follow-ups of open commitments: at most `per_window` per
    owner in any `window` seconds, the same commitment not again within `cooldown` seconds,
    nothing in the quiet hours (wall-clock in `zone`)."""

    per_window: int = 3
    window: float = 3600.0
    cooldown: float = 3000.0  # ~50 min
    quiet: tuple[clock_time, clock_time] | None = None
    zone: tzinfo = ZoneInfo("UTC")

    @classmethod
    def from_config(cls, quiet_hours: str = "", timezone: str = "UTC", **kwargs) -> FollowupPolicy:
        """From the schedule file's `quiet_hours` ("22:00-07:00", '' = none) and `timezone`."""
        return cls(quiet=parse_quiet_hours(quiet_hours) if quiet_hours else None, zone=zone(timezone), **kwargs)


def followup_verdict(
    now: float, owner_followups: Sequence[float], last_for_commitment: float, policy: FollowupPolicy
) -> str:
    """'' when a proactive follow-up of one commitment may be said at `now`, else why not:
    "quiet_hours", "rate_limit" (`owner_followups`: times of the owner's follow-ups already
    said) or "cooldown" (`last_for_commitment`: its last follow-up, 0 = never)."""
    if in_quiet_hours(now, policy.quiet, policy.zone):
        return "quiet_hours"
    recent = [t for t in owner_followups if now - policy.window < t <= now]
    if len(recent) >= policy.per_window:
        return "rate_limit"
    if last_for_commitment and now - last_for_commitment < policy.cooldown:
        return "cooldown"
    return ""


# ----------------------------------------------------------------------------- the book
class ReminderBook:
    """Reminders and commitments of every owner in one memory database (`tables`: a store's
    `reminder_tables()`). `clock`: epoch seconds (the node clock; tests inject one)."""

    def __init__(
        self,
        tables: ReminderTables,
        clock: Callable[[], float] = time.time,
        resay_after: float = RESAY_AFTER,
        max_says: int = MAX_SAYS,
        report: Callable[[str, str], None] | None = None,
    ) -> None:
        self.tables = tables
        self.clock = clock
        self.resay_after = resay_after
        self.max_says = max_says
        self.corrupt: dict[str, str] = {}  # row id -> why it was skipped (every read so far)
        self._report = report

    # -- reading rows
    def _read(self, rows: builtins.list[dict]) -> builtins.list[tuple[Reminder, ZoneInfo, RRule | None]]:
        out = []
        for row in rows:
            try:
                out.append(_check(row))
            except (ReminderError, TypeError, ValueError) as exc:
                rid = str(row.get("id", "?"))
                reason = str(exc)
                if self.corrupt.get(rid) != reason:
                    log.warning("reminder %s (owner %r) skipped: %s", rid, row.get("owner"), reason)
                self.corrupt[rid] = reason
                if self._report is not None:
                    self._report(rid, reason)
        return out

    def _one(self, owner: str, reminder_id: str) -> tuple[Reminder, ZoneInfo, RRule | None] | None:
        if not owner:
            return None
        found = self._read(self.tables.rows("reminders", owner, row_id=reminder_id))
        return found[0] if found else None

    def _save(self, old: Reminder, new: Reminder) -> Reminder | None:
        changed = {k: v for k, v in new.row().items() if getattr(old, k) != v}
        if not changed:
            return new
        ok = self.tables.update("reminders", old.owner, old.id, changed, statuses=[old.status])
        return new if ok else None  # changed meanwhile (cancelled from the CLI): left as it is

    # -- reminders
    def add(
        self,
        owner: str,
        tz: str,
        start_local: str,
        rrule: str,
        text: str,
        source_utterance: str = "",
        source_turn: str = "",
    ) -> Reminder:
        """Store a reminder; its first due time is `start_local` in `tz` (a repeat: its first
        occurrence not before now). ReminderError: a guest, no text, a bad zone, time or rule,
        a one-shot in the past, a rule with no occurrence left."""
        if not owner:
            raise ReminderError("a guest has no reminders (no owner)")
        if not text.strip():
            raise ReminderError("a reminder needs a text")
        where = zone(tz)
        start = parse_local(start_local)
        now = self.clock()
        first = _first_due(start, where, tz, rrule, now)
        reminder = Reminder(
            id=uuid.uuid4().hex[:12],
            owner=owner,
            tz=tz,
            start_local=start.strftime(LOCAL_FORMAT),
            rrule=rrule.strip(),
            next_due_utc=first,
            status=SCHEDULED,
            snoozed_until_utc=0.0,
            attempts=0,
            text=text.strip(),
            source_utterance=source_utterance,
            source_turn=source_turn,
            created=now,
            updated=now,
        )
        self.tables.insert("reminders", reminder.row())
        return reminder

    def list(self, owner: str, include_done: bool = False) -> builtins.list[Reminder]:
        """The owner's reminders by next due time: active ones (scheduled, due), or all."""
        if not owner:
            return []
        rows = self.tables.rows("reminders", owner, statuses=() if include_done else ACTIVE)
        return [r for r, _z, _rule in self._read(rows)]

    def get(self, owner: str, reminder_id: str) -> Reminder | None:
        found = self._one(owner, reminder_id)
        return found[0] if found else None

    def cancel(self, owner: str, reminder_id: str) -> bool:
        """Cancel the owner's active reminder `reminder_id`; False: no such active reminder."""
        if not owner:
            return False
        values = {"status": CANCELLED, "updated": self.clock()}
        return bool(self.tables.update("reminders", owner, reminder_id, values, statuses=ACTIVE))

    def snooze(self, owner: str, reminder_id: str, until_utc: float) -> Reminder | None:
        """Say it again at `until_utc` (scheduled; its says counted anew). None: no such active reminder."""
        found = self._one(owner, reminder_id)
        if found is None or found[0].status not in ACTIVE:
            return None
        old = found[0]
        new = replace(
            old,
            status=SCHEDULED,
            next_due_utc=float(until_utc),
            snoozed_until_utc=float(until_utc),
            attempts=0,
            updated=self.clock(),
        )
        return self._save(old, new)

    def acknowledge(self, owner: str, reminder_id: str) -> Reminder | None:
        """The user heard it (or did it): a one-shot is acknowledged; a repeat moves to its
        next occurrence (after now, and after the one it was waiting for). None: no such active reminder."""
        found = self._one(owner, reminder_id)
        if found is None or found[0].status not in ACTIVE:
            return None
        old, where, rule = found
        now = self.clock()
        if rule is None:
            return self._save(old, replace(old, status=ACKNOWLEDGED, attempts=0, updated=now))
        return self._save(old, self._moved_on(old, where, rule, max(now, old.next_due_utc), now))

    def change(
        self,
        owner: str,
        reminder_id: str,
        start_local: str | None = None,
        text: str | None = None,
        rrule: str | None = None,
    ) -> Reminder | None:
        """Give an active reminder a new first time (wall clock in its zone), text or rule (''
        = once; None keeps each). Its says are counted anew. None: no such active reminder;
        ReminderError: the new time is in the past or the rule has no occurrence left."""
        found = self._one(owner, reminder_id)
        if found is None or found[0].status not in ACTIVE:
            return None
        old, where, _rule = found
        start = parse_local(start_local) if start_local is not None else parse_local(old.start_local)
        new_rule_text = old.rrule if rrule is None else rrule.strip()
        now = self.clock()
        if start_local is None and rrule is None:
            first = old.next_due_utc  # only the text changes
        else:
            first = _first_due(start, where, old.tz, new_rule_text, now)
        new = replace(
            old,
            start_local=start.strftime(LOCAL_FORMAT),
            rrule=new_rule_text,
            text=text.strip() if text and text.strip() else old.text,
            next_due_utc=float(first),
            status=SCHEDULED,
            attempts=0,
            snoozed_until_utc=0.0,
            updated=now,
        )
        return self._save(old, new)

    def _moved_on(self, old: Reminder, where: ZoneInfo, rule: RRule, after: float, now: float) -> Reminder:
        nxt = next_occurrence(rule, where, after)
        if nxt is None:
            return replace(old, status=DONE, attempts=0, snoozed_until_utc=0.0, updated=now)
        return replace(old, status=SCHEDULED, next_due_utc=nxt, attempts=0, snoozed_until_utc=0.0, updated=now)

    def due(self, now_utc: float) -> builtins.list[Reminder]:
        """Every owner's active reminders whose due time is at or before `now_utc`, oldest first
        (the scheduler says each, then calls `advance`). Guests' rows are never returned."""
        rows = self.tables.rows("reminders", None, statuses=ACTIVE, due_before=now_utc)
        return [r for r, _z, _rule in self._read(rows) if r.owner]

    def advance(self, reminder: Reminder, now_utc: float) -> Reminder | None:
        """After `reminder` was said at `now_utc`: due again in `resay_after` seconds, or, said
        `max_says` times, missed (a one-shot) or moved on to its next occurrence (a repeat; also
        when that comes before the next say). None: the row changed meanwhile or is unreadable."""
        found = self._one(reminder.owner, reminder.id)
        if found is None or found[0].status not in ACTIVE:
            return None
        old, where, rule = found
        says = old.attempts + 1
        if says >= self.max_says:
            if rule is None:
                return self._save(old, replace(old, status=MISSED, attempts=says, updated=now_utc))
            return self._save(old, self._moved_on(old, where, rule, now_utc, now_utc))
        again = now_utc + self.resay_after
        if rule is not None:
            nxt = next_occurrence(rule, where, now_utc)
            if nxt is None or nxt <= again:
                return self._save(old, self._moved_on(old, where, rule, now_utc, now_utc))
        return self._save(old, replace(old, status=DUE, attempts=says, next_due_utc=again, updated=now_utc))

    def overdue_summary(self, owner: str, since_utc: float, now_utc: float, consume: bool = True) -> OverdueSummary:
        """What of the owner's fell due before `now_utc` and was not said (the node was down
        since `since_utc`): one item per reminder, a repeat counting its occurrences since
        max(since_utc, its due time). With `consume`, each one-shot becomes missed and each
        repeat moves to its next occurrence after now, so `due` does not fire them one by one."""
        if not owner:
            return OverdueSummary(owner, ())
        rows = self.tables.rows("reminders", owner, statuses=ACTIVE, due_before=now_utc)
        items = []
        for old, where, rule in self._read(rows):
            if old.next_due_utc >= now_utc:
                continue
            if rule is None:
                times = [old.next_due_utc]
            else:
                times = occurrences_between(rule, where, max(since_utc, old.next_due_utc), now_utc) or [
                    old.next_due_utc
                ]
            items.append(OverdueItem(old, len(times), times[0], times[-1]))
            if consume:
                if rule is None:
                    self._save(old, replace(old, status=MISSED, updated=now_utc))
                else:
                    self._save(old, self._moved_on(old, where, rule, now_utc, now_utc))
        return OverdueSummary(owner, tuple(items))

    # -- commitments
    def add_commitment(self, owner: str, text: str, due_hint_utc: float = 0.0, source_turn: str = "") -> Commitment:
        """Store an open commitment ("I'll call the dentist tomorrow"); `due_hint_utc` 0 = no time."""
        if not owner:
            raise ReminderError("a guest has no commitments (no owner)")
        if not text.strip():
            raise ReminderError("a commitment needs a text")
        item = Commitment(
            id=uuid.uuid4().hex[:12],
            owner=owner,
            text=text.strip(),
            due_hint_utc=float(due_hint_utc),
            status=OPEN,
            followups=0,
            last_followup_utc=0.0,
            source_turn=source_turn,
            created=self.clock(),
        )
        self.tables.insert("commitments", item.row())
        return item

    def commitments(self, owner: str, include_closed: bool = False) -> builtins.list[Commitment]:
        if not owner:
            return []
        rows = self.tables.rows("commitments", owner, statuses=() if include_closed else (OPEN,))
        return [Commitment(**r) for r in rows]

    def commitment_done(self, owner: str, commitment_id: str) -> bool:
        return bool(owner) and bool(
            self.tables.update("commitments", owner, commitment_id, {"status": CLOSED_DONE}, statuses=(OPEN,))
        )

    def cancel_commitment(self, owner: str, commitment_id: str) -> bool:
        return bool(owner) and bool(
            self.tables.update("commitments", owner, commitment_id, {"status": CLOSED_CANCELLED}, statuses=(OPEN,))
        )

    def cancel_open(self, owner: str) -> int:
        """Cancel every open commitment of the owner (the conversation was cleared); how many."""
        if not owner:
            return 0
        return self.tables.update_all("commitments", owner, {"status": CLOSED_CANCELLED}, statuses=(OPEN,))

    def record_followup(self, owner: str, commitment_id: str, now_utc: float) -> bool:
        """A proactive follow-up of the open commitment was said at `now_utc`."""
        found = [c for c in self.commitments(owner) if c.id == commitment_id]
        if not found:
            return False
        values = {"followups": found[0].followups + 1, "last_followup_utc": float(now_utc)}
        return bool(self.tables.update("commitments", owner, commitment_id, values, statuses=(OPEN,)))

    def followup_candidates(
        self, owner: str, now_utc: float, policy: FollowupPolicy, said: Sequence[float] = ()
    ) -> builtins.list[Commitment]:
        """The owner's open commitments that may be followed up at `now_utc` (their due hint
        passed or none), oldest first, as many as the limit still allows. The owner's history is
        each commitment's stored last follow-up plus `said`: times of follow-ups the caller
        knows of that are not stored (a commitment followed up twice within the hour: its first)."""
        open_ = self.commitments(owner)
        items = [c for c in open_ if c.due_hint_utc <= now_utc]
        history = sorted([*said, *(c.last_followup_utc for c in open_ if c.last_followup_utc)])
        out: builtins.list[Commitment] = []
        for item in items:
            if followup_verdict(now_utc, history, item.last_followup_utc, policy):
                continue
            out.append(item)
            history.append(now_utc)
        return out
