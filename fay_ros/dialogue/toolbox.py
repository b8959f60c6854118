"""The dialogue's built-in tools in one registry: the clock and memory (`tools.base_tools`),
the reminders (`reminder_tools`) and the knowledge base (`knowledge_tools`). A module of its own
so that `reminder_tools` can build on `tools` without `tools` importing it back."""

from __future__ import annotations

from .knowledge_tools import add_knowledge_tools
from .reminder_tools import add_reminder_tools
from .tools import ToolRegistry, base_tools


def builtin_tools() -> ToolRegistry:
    return add_knowledge_tools(add_reminder_tools(base_tools()))
