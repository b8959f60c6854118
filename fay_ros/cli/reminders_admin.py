"""`fay-ros reminders list|add|cancel`: an owner's reminders, straight in the memory database
(like `fay-ros memory`: the same `--db`, a file path, sqlite:///<path> or postgresql://...).

`add_admin_actions(sub)` adds the three actions to the `reminders` command's subparsers.
While this branch has no `fay_ros/cli/reminders.py` (the command with the natural-language
`parse`), `register` makes `fay-ros reminders` itself; once that module exists it owns the
command and calls `add_admin_actions`, and `register` here does nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys

from ..common.paths import default_memory_db


def register(subparsers: argparse._SubParsersAction) -> None:
    if importlib.util.find_spec("fay_ros.cli.reminders") is not None:
        return  # the reminders command lives there and calls add_admin_actions
    p = subparsers.add_parser("reminders", help="list, add or cancel an owner's reminders")
    p.set_defaults(func=lambda args: (p.print_help(), 1)[1])
    add_admin_actions(p.add_subparsers(dest="reminders_command", metavar="ACTION"))


def add_admin_actions(sub: argparse._SubParsersAction) -> None:
    """The actions list, add and cancel on the `reminders` command's subparsers."""

    def action(name: str, **kwargs) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, **kwargs)
        parser.add_argument("--owner", required=True, help="the user id the reminders belong to")
        parser.add_argument("--json", action="store_true", help="print JSON")
        parser.add_argument(
            "--db",
            default=default_memory_db(),
            help="memory database: a file, sqlite:///<path> or postgresql://user@host/db (default %(default)s)",
        )
        return parser

    ls = action("list", help="the owner's reminders by due time")
    ls.add_argument("--all", action="store_true", help="also acknowledged, missed, cancelled and done ones")
    ls.set_defaults(func=_list)
    add = action(
        "add",
        help='add a reminder: TEXT in words ("remind me tomorrow at 6 pm to call mum", "明天下午三点提醒我交周报"), '
        'or --at "YYYY-MM-DDTHH:MM" [--rrule RRULE] TEXT',
    )
    add.add_argument("text", help="the request in words, or (with --at) what to remind")
    add.add_argument("--at", default=None, help='wall-clock time of the first occurrence, "YYYY-MM-DDTHH:MM"')
    add.add_argument("--tz", default=None, help="IANA time zone, e.g. Europe/London (default: the system's)")
    add.add_argument("--rrule", default="", help='RFC 5545 recurrence rule, e.g. "FREQ=DAILY" (default: once)')
    add.set_defaults(func=_add)
    cancel = action("cancel", help="cancel a reminder by id")
    cancel.add_argument("id", help="the reminder's id (from list)")
    cancel.set_defaults(func=_cancel)


def _book(args):
    import time

    from ..memory.backend import open_store
    from ..memory.embeddings import HashedNgramEmbedder
    from ..memory.reminder_book import ReminderBook
    from ..memory.schema import SchemaError

    try:
        # the reminders need no embedder; the hashed one loads no model
        store = open_store(args.db, HashedNgramEmbedder(), clock=time.time)
    except (SchemaError, ValueError, OSError) as exc:
        print(f"fay-ros reminders: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    return store, ReminderBook(store.reminder_tables(), report=_warn)


def _warn(reminder_id: str, reason: str) -> None:
    print(f"fay-ros reminders: reminder {reminder_id} skipped: {reason}", file=sys.stderr)


def _show(reminders, as_json: bool) -> None:
    if as_json:
        print(json.dumps([r.as_json() for r in reminders], ensure_ascii=False, indent=1))
        return
    for r in reminders:
        repeat = f"  repeat {r.rrule}" if r.rrule else ""
        print(f"{r.id}  {r.status:<12} {r.due_local} {r.tz}{repeat}")
        print(f"    {r.text}")


def _list(args) -> int:
    store, book = _book(args)
    try:
        _show(book.list(args.owner, include_done=args.all), args.json)
    finally:
        store.close()
    return 0


# What to ask instead of guessing, per parser question (schedule.reminder_text).
_QUESTIONS = {
    "past": "that time has passed",
    "no_time": "no time of day was said",
    "night": "that is at night: say the time with pm/am or as night if it is meant",
    "ambiguous": "the time is vague or one of several",
}


def _from_words(words: str, tz: str) -> tuple[str, str, str] | None:
    """(start_local, rrule, text) read from the request in words, or None after saying why
    nothing can be added (not a request, or a question to ask first)."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from ..schedule.reminder_text import parse_reminder

    parsed = parse_reminder(words, datetime.now(ZoneInfo(tz)), tz)
    if not parsed.is_request:
        print("fay-ros reminders add: not a reminder request; nothing added", file=sys.stderr)
        return None
    if parsed.question or parsed.due is None:
        why = _QUESTIONS.get(parsed.question or "no_time", parsed.question or "")
        print(f"fay-ros reminders add: {why}; nothing added (try `fay-ros reminders parse`)", file=sys.stderr)
        return None
    return parsed.due.strftime("%Y-%m-%dT%H:%M:%S"), parsed.repeat or "", parsed.text


def _add(args) -> int:
    from zoneinfo import ZoneInfoNotFoundError

    from ..memory.reminder_book import ReminderError
    from ..schedule.config import local_zone_name

    tz = args.tz or local_zone_name()
    try:
        read = (args.at, args.rrule, args.text) if args.at else _from_words(args.text, tz)
    except (ZoneInfoNotFoundError, ValueError):
        print(f"fay-ros reminders add: unknown time zone {tz!r}", file=sys.stderr)
        return 2
    if read is None:
        return 2
    start_local, rrule, text = read
    store, book = _book(args)
    try:
        try:
            reminder = book.add(args.owner, tz, start_local, rrule, text, source_utterance=args.text)
        except ReminderError as exc:
            print(f"fay-ros reminders add: {exc}", file=sys.stderr)
            return 2
        _show([reminder], args.json)
    finally:
        store.close()
    return 0


def _cancel(args) -> int:
    store, book = _book(args)
    try:
        if not book.cancel(args.owner, args.id):
            print(f"fay-ros reminders cancel: {args.owner!r} has no active reminder {args.id}", file=sys.stderr)
            return 1
        if args.json:
            print(json.dumps({"id": args.id, "status": "cancelled"}))
        else:
            print(f"cancelled {args.id}")
    finally:
        store.close()
    return 0
