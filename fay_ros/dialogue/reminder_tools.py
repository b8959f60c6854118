"""Reminders as tools (issue 36): `reminder_add`, `reminder_list`, `reminder_cancel` for the
dialogue's tool loop, and the operations `fay-ros mcp` serves as the same three tools.

One implementation for both: the operations here call the `Reminders` port
(`fay_ros.memory.reminder_service`; over ROS `RosReminders` on the memory node's
`memory/reminders`), so a reminder added by a tool is the one the dialogue lists, the runner
says and the admin page shows. `when` is read with `parse_reminder` in the owner's zone; a time
the dialogue would ask about (past, no time of day, a night time not said as night, vague) is
refused with a ToolError saying what to ask the user, never guessed.

Identity: the owner is the session's (`ToolContext.owner`, or the MCP server's bound owner),
never an argument. A guest has no reminders. A scheduled or proactive turn
(`ToolContext.scheduled`) nobody asked for creates no schedule and cancels none: reminder_add
and reminder_cancel are refused there; reminder_list still answers.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from ..memory.reminder_book import LOCAL_FORMAT, Commitment, Reminder
from ..memory.reminder_service import ReminderRequest
from ..schedule.reminder_text import AMBIGUOUS, NIGHT, NO_TIME, PAST, parse_reminder
from ..text.words import has_cjk
from .reminder_talk import rule_words, until_words
from .tools import ReminderAccess, Tool, ToolContext, ToolError, ToolRegistry

REMINDER_TOOLS = ("reminder_add", "reminder_list", "reminder_cancel")
GUEST_REFUSAL = "this speaker is not identified (guest): there are no reminders"
SCHEDULED_REFUSAL = (
    "{name} is refused in a scheduled or proactive turn: only the user's own request creates or cancels a reminder"
)
UNAVAILABLE = "reminders are unavailable right now (the memory node does not serve them)"
MAX_WHAT = 300


# ----------------------------------------------------------------------------- operations
def reminder_view(r: Reminder) -> dict[str, Any]:
    """A reminder for a tool's answer: next due as local wall-clock time in its zone, the repeat
    rule and the same in words."""
    zh = has_cjk(r.text)
    return {
        "id": r.id,
        "text": r.text,
        "due_local": r.due_local,
        "tz": r.tz,
        "repeat": r.rrule,
        "repeat_words": rule_words(r.rrule, zh) if r.repeats else "",
        "status": r.status,
    }


def commitment_view(c: Commitment, tz: str) -> dict[str, Any]:
    hint = datetime.fromtimestamp(c.due_hint_utc, ZoneInfo(tz)).strftime(LOCAL_FORMAT) if c.due_hint_utc else ""
    return {"id": c.id, "text": c.text, "due_hint_local": hint, "status": c.status}


def _question_refusal(question: str, when: str, due: datetime | None) -> str:
    shown = due.strftime("%Y-%m-%d %H:%M") if due is not None else ""
    if question == PAST:
        return f"'{when}' is in the past ({shown}): ask the user for a time still ahead"
    if question == NO_TIME:
        return f"'{when}' names no time of day: ask the user what time"
    if question == NIGHT:
        return (
            f"'{when}' falls in the night ({shown}) but was not said as night: ask the user, then "
            "say the time as night (e.g. '2 am', '23:30', '凌晨两点')"
        )
    if question == AMBIGUOUS:
        return f"'{when}' is vague or ambiguous: ask the user for one exact time"
    return f"cannot read a time from '{when}': ask the user when"


async def add_reminder(
    access: ReminderAccess, owner: str, when: str, what: str, *, source_turn: str = ""
) -> tuple[Reminder, float]:
    """Add a reminder of `what` at `when` (words, English or Chinese) for `owner`: the added
    reminder and the clock's now. ToolError when the words need a question or the store refuses."""
    when, what = when.strip(), what.strip()
    if not owner:
        raise ToolError(GUEST_REFUSAL)
    if not when:
        raise ToolError("reminder_add needs 'when' (e.g. 'tomorrow at 6 pm', '明天下午三点')")
    if not what:
        raise ToolError("reminder_add needs 'what' (what to remind the user of)")
    if len(what) > MAX_WHAT:
        raise ToolError(f"reminder_add: 'what' is longer than {MAX_WHAT} characters")
    if what.lower().startswith("to "):
        what = what[3:].strip()
    clock = access.clock()
    now = datetime.fromtimestamp(clock, ZoneInfo(access.tz))
    # only the time words are parsed (what to remind of is taken as given, so a number in it
    # is never read as a time)
    zh = has_cjk(when)
    parsed = parse_reminder(f"{when}提醒我" if zh else f"remind me {when}", now, access.tz)
    if not parsed.is_request or parsed.due is None or parsed.question is not None:
        raise ToolError(_question_refusal(parsed.question or "", when, parsed.due))
    answer = await access.port.call(
        ReminderRequest(
            action="add",
            owner=owner,
            text=what,
            tz=access.tz,
            start_local=parsed.due.replace(tzinfo=None).strftime(LOCAL_FORMAT),
            repeat=parsed.repeat or "",
            source_utterance=f"{when} | {what}",
            source_turn=source_turn,
        )
    )
    if not answer.success or not answer.reminders:
        raise ToolError(f"reminder not added: {answer.message or 'the store refused it'}")
    return answer.reminders[0], clock


async def list_reminders(access: ReminderAccess, owner: str) -> tuple[tuple[Reminder, ...], tuple[Commitment, ...]]:
    """The owner's active reminders and open commitments."""
    if not owner:
        raise ToolError(GUEST_REFUSAL)
    found = await access.port.call(ReminderRequest(action="list", owner=owner))
    if not found.success:
        raise ToolError(f"reminders not listed: {found.message}")
    open_ = await access.port.call(ReminderRequest(action="commitments", owner=owner))
    if not open_.success:
        raise ToolError(f"commitments not listed: {open_.message}")
    return found.reminders, open_.commitments


async def cancel_reminder(access: ReminderAccess, owner: str, reminder_id: str) -> Reminder:
    if not owner:
        raise ToolError(GUEST_REFUSAL)
    reminder_id = reminder_id.strip()
    if not reminder_id:
        raise ToolError("reminder_cancel needs 'id' (from reminder_list)")
    answer = await access.port.call(ReminderRequest(action="cancel", owner=owner, id=reminder_id))
    if not answer.success or not answer.reminders:
        raise ToolError(f"not cancelled: {answer.message} (ids come from reminder_list)")
    return answer.reminders[0]


# ----------------------------------------------------------------------------- dialogue tools
def _access(ctx: ToolContext, name: str, *, changes: bool) -> ReminderAccess:
    if not ctx.owner:
        raise ToolError(GUEST_REFUSAL)
    if changes and ctx.scheduled:
        raise ToolError(SCHEDULED_REFUSAL.format(name=name))
    if ctx.reminders is None:
        raise ToolError(UNAVAILABLE)
    return ctx.reminders


def _line(r: Reminder) -> str:
    view = reminder_view(r)
    repeat = f", {view['repeat_words']}" if view["repeat_words"] else ""
    return f"- id {r.id}: {r.text} (next {view['due_local'].replace('T', ' ')[:16]} {r.tz}{repeat}; {r.status})"


async def _reminder_add(args: dict[str, Any], ctx: ToolContext) -> str:
    access = _access(ctx, "reminder_add", changes=True)
    added, now = await add_reminder(
        access,
        ctx.owner,
        str(args.get("when") or ""),
        str(args.get("what") or ""),
        source_turn=f"{ctx.conversation_id}#{ctx.turn}" if ctx.conversation_id else "",
    )
    left = until_words(added.next_due_utc - now, has_cjk(added.text))
    return f"added:\n{_line(added)}\n(first due {left}; tell the user the time and what)"


async def _reminder_list(args: dict[str, Any], ctx: ToolContext) -> str:
    access = _access(ctx, "reminder_list", changes=False)
    reminders, commitments = await list_reminders(access, ctx.owner)
    lines = [_line(r) for r in reminders] or ["(no reminders)"]
    if commitments:
        lines.append("open commitments (things the user said they would do):")
        lines += [f"- {c.text}" for c in commitments]
    return "\n".join(lines)


async def _reminder_cancel(args: dict[str, Any], ctx: ToolContext) -> str:
    access = _access(ctx, "reminder_cancel", changes=True)
    cancelled = await cancel_reminder(access, ctx.owner, str(args.get("id") or ""))
    return f"cancelled: {cancelled.text}"


WHEN_DESCRIPTION = (
    "when, in the user's words: 'tomorrow at 6 pm', 'in 20 minutes', 'every weekday at 7:30', '明天下午三点'. "
    "A past, vague or night time, or a day without a time of day, is refused: ask the user instead"
)


def add_reminder_tools(registry: ToolRegistry) -> ToolRegistry:
    """The three reminder tools into the dialogue's `registry` (owner = the session's)."""
    registry.add(
        Tool(
            "reminder_add",
            "Set a reminder for the current user, only when they ask for one.",
            {
                "when": {"type": "string", "description": WHEN_DESCRIPTION},
                "what": {"type": "string", "description": "what to remind them of, e.g. 'call my mother'"},
            },
            _reminder_add,
            required=("when", "what"),
        )
    )
    registry.add(
        Tool(
            "reminder_list",
            "The current user's active reminders (with ids) and open commitments.",
            {},
            _reminder_list,
        )
    )
    registry.add(
        Tool(
            "reminder_cancel",
            "Cancel one of the current user's reminders by its id (from reminder_list).",
            {"id": {"type": "string", "description": "the reminder's id"}},
            _reminder_cancel,
            required=("id",),
        )
    )
    return registry
