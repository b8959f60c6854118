"""The reminder tools of `fay-ros mcp` (issue 36): reminder_list, reminder_add, reminder_cancel.

The same operations as the dialogue's reminder tools (`fay_ros.dialogue.reminder_tools`: `when`
read in the owner's zone with `parse_reminder`, a time that needs a question refused), over the
`Reminders` port (`RosReminders` on the memory node's `memory/reminders` in `fay-ros mcp`).
The owner is bound exactly as for the memory tools (`fay_ros.agent.mcp_memory`): the server's
`--owner` or the owner of the bearer token, never an argument; an argument naming a person, or
one a tool does not declare, is refused; a guest has no reminders. No rclpy in this module.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import Field

from ..dialogue.reminder_tools import (
    GUEST_REFUSAL,
    WHEN_DESCRIPTION,
    ReminderAccess,
    add_reminder,
    cancel_reminder,
    commitment_view,
    list_reminders,
    reminder_view,
)
from ..dialogue.tools import Tool, ToolContext, ToolError, ToolRegistry
from .mcp_memory import OWNER_NOTE, NoArgs, _Args, _json, _properties, check_arguments


class AddArgs(_Args):
    when: str = Field(min_length=1, max_length=200, description=WHEN_DESCRIPTION)
    what: str = Field(min_length=1, max_length=300, description="what to remind the owner of, e.g. 'call my mother'")


class CancelArgs(_Args):
    id: str = Field(min_length=1, max_length=100, description="the reminder's id (from reminder_list)")


def add_reminder_tools(registry: ToolRegistry, access: ReminderAccess) -> ToolRegistry:
    """The three reminder tools into the MCP server's `registry`, over `access`."""

    def add(name: str, description: str, model: type[_Args], run: Callable[[Any, str], Awaitable[Any]]) -> None:
        properties, required = _properties(model)

        async def executor(args: dict[str, Any], ctx: ToolContext) -> str:
            parsed = check_arguments(model, name, args)
            if not ctx.owner:
                raise ToolError(GUEST_REFUSAL)
            return _json(await run(parsed, ctx.owner))

        registry.add(Tool(name, f"{description} {OWNER_NOTE}", properties, executor, required))

    async def listed(_a: NoArgs, owner: str) -> dict[str, Any]:
        reminders, commitments = await list_reminders(access, owner)
        return {
            "reminders": [reminder_view(r) for r in reminders],
            "commitments": [commitment_view(c, access.tz) for c in commitments],
        }

    async def added(a: AddArgs, owner: str) -> dict[str, Any]:
        reminder, _now = await add_reminder(access, owner, a.when, a.what, source_turn="mcp")
        return {"ok": True, "reminder": reminder_view(reminder)}

    async def cancelled(a: CancelArgs, owner: str) -> dict[str, Any]:
        reminder = await cancel_reminder(access, owner, a.id)
        return {"ok": True, "reminder": reminder_view(reminder)}

    add(
        "reminder_list",
        "The owner's active reminders (id, text, next due as local time, repeat rule and in words, status) "
        "and open commitments.",
        NoArgs,
        listed,
    )
    add(
        "reminder_add",
        f"Set a reminder for the owner: 'when' in words, read in the companion's time zone ({access.tz}); a past, "
        "vague or night time, or a day without a time of day, is refused with what to ask instead.",
        AddArgs,
        added,
    )
    add("reminder_cancel", "Cancel one of the owner's reminders by its id.", CancelArgs, cancelled)
    return registry
