"""`fay-ros reminders`: reminders from the command line. `parse` shows what a reminder request
says (due, what, repeat, the question to ask instead of guessing), without storing anything.
This module owns the command; the stored reminders' actions (list, add, cancel) come from
`reminders_admin.add_admin_actions` where that module exists.

    fay-ros reminders parse "明天下午三点提醒我交周报" --now 2026-12-04T09:00 --tz Asia/Shanghai --json
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..schedule.config import local_zone_name


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("reminders", help="reminders: what a request says (parse); the stored ones")
    p.set_defaults(func=lambda args: (p.print_help(), 1)[1])
    actions = p.add_subparsers(dest="reminders_command", metavar="ACTION")
    register_parse(actions)
    register_admin(actions)


def register_admin(actions: argparse._SubParsersAction) -> None:
    """list, add, cancel: from `reminders_admin` (reminder storage) where it exists."""
    try:
        admin = importlib.import_module(f"{__package__}.reminders_admin")
    except ModuleNotFoundError:
        return
    admin.add_admin_actions(actions)


def register_parse(actions: argparse._SubParsersAction) -> None:
    parse = actions.add_parser("parse", help="what a reminder request says (nothing is stored)")
    parse.add_argument("text", help='e.g. "Remind me to call my mother tomorrow at 6 pm" or "明天下午三点提醒我交周报"')
    parse.add_argument("--now", default=None, help="the time it was said, ISO 8601 (default: now); no offset = in --tz")
    parse.add_argument("--tz", default=None, help="IANA time zone, e.g. Asia/Shanghai (default: the system's)")
    parse.add_argument("--json", action="store_true", help='print {"due", "text", "repeat", "question"} as JSON')
    parse.set_defaults(func=_parse)


def _parse(args: argparse.Namespace) -> int:
    from ..schedule.reminder_text import parse_reminder

    tz = args.tz or local_zone_name()
    try:
        zone = ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        print(f"unknown time zone {tz!r} (an IANA name such as Asia/Shanghai)", file=sys.stderr)
        return 2
    if args.now:
        try:
            now = datetime.fromisoformat(args.now)
        except ValueError:
            print(f"--now {args.now!r} is not an ISO 8601 time (e.g. 2026-12-04T09:00)", file=sys.stderr)
            return 2
        now = now.replace(tzinfo=zone) if now.tzinfo is None else now
    else:
        now = datetime.now(zone)
    result = parse_reminder(args.text, now, tz)
    fields = result.as_dict()
    if args.json:
        print(json.dumps(fields, ensure_ascii=False))
        return 0
    if not result.is_request:
        print("not a reminder request")
        return 0
    for key, value in fields.items():
        print(f"{key:9} {value if value is not None else '-'}")
    return 0
