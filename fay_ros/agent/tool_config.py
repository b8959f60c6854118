"""Every tool the agent may use, in one place: the dialogue node's `tools_file`.

    builtin: [current_time, memory_recall, memory_remember, memory_forget, reminder_add, reminder_list, reminder_cancel]
    mcp:                  # MCP servers whose allow-listed tools become agent tools
      servers: [...]      # format: fay_ros/agent/mcp_config.py
    ros:                  # the ROS 2 allow-list: services, actions, topics to read / publish
      services: [...]     # format: fay_ros/agent/ros_tools_config.py
      actions: [...]
      topics_read: [...]
      topics_publish: [...]

`config/tools.yaml` (the default) lists the built-in tools only; `config/tools.example.yaml`
shows every kind. Read with the strict YAML loader: unknown keys, duplicates and bad entries
are errors naming the file, the key path (e.g. `ros.services[0].type`) and the line.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..common.errors import TableError
from ..common.yaml_loader import load_model
from .mcp_config import McpServersFile
from .ros_tools_config import RosToolsConfig

BUILTIN_TOOLS = (
    "current_time",
    "memory_recall",
    "memory_remember",
    "memory_forget",
    "reminder_add",
    "reminder_list",
    "reminder_cancel",
    "knowledge_search",
)


class ToolsFileError(TableError):
    """The tools file is unusable; the message names file, key path and line of each problem."""


class ToolsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    builtin: list[str] = Field(default_factory=lambda: list(BUILTIN_TOOLS))
    mcp: McpServersFile = Field(default_factory=McpServersFile)
    ros: RosToolsConfig = Field(default_factory=RosToolsConfig)

    def cross_check(self) -> list[tuple[str, str]]:
        problems = [(f"ros.{where}", problem) for where, problem in self.ros.cross_check()]
        twice = sorted({name for name in self.builtin if self.builtin.count(name) > 1})
        if twice:
            problems.append(("builtin", f"listed twice: {twice}"))
        return problems


def load_tools_file(path: Path | str) -> ToolsFile:
    return load_model(path, ToolsFile, error=ToolsFileError)
