"""The ROS tools allow-list: which ROS 2 services, actions and topics the agent may use.

A YAML file (read with the strict loader, validated here) lists every service, action, topic
to read and topic to publish, each with its interface type and a description for the model:

    services:
      - name: /robot/dock
        type: std_srvs/srv/Trigger
        description: Drive back to the charging dock.
        timeout: 10
    actions:
      - name: /fibonacci
        type: test_msgs/action/Fibonacci
        description: Compute a Fibonacci sequence (a slow job with progress).
        timeout: 60
    topics_read:
      - name: /battery/percent
        type: std_msgs/msg/Float32
        description: Battery charge in percent.
        timeout: 2
        qos: latched      # reliable (default) | latched | best_effort
    topics_publish:
      - name: /fay/led/color
        type: std_msgs/msg/ColorRGBA
        description: Set the LED colour (r, g, b, a in 0..1).

Each entry becomes one tool with a derived name (`tool_name()`): `ros_call_<name>`,
`ros_action_<name>`, `ros_read_<name>`, `ros_publish_<name>`, where <name> is the ROS name
without its leading slash, every other character outside [A-Za-z0-9] turned into `_`
(`/robot/dock` -> `ros_call_robot_dock`). An entry may set `tool` to choose the name itself.
Names are absolute (a leading `/`), so the allow-list does not depend on the node's namespace.
Nothing else is reachable: the tools exist only for these entries and address only their own
name; no argument ever names a service or topic.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..common.errors import TableError
from ..common.yaml_loader import load_model

# A fully qualified ROS 2 name: /token(/token)*, tokens of letters, digits, underscores, not
# starting with a digit (rcl's rules, without substitutions: `~` and `{}` are refused).
ROS_NAME = re.compile(r"^(/[A-Za-z_][A-Za-z0-9_]*)+$")
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # what OpenAI-compatible servers accept
PREFIXES = {
    "services": "ros_call_",
    "actions": "ros_action_",
    "topics_read": "ros_read_",
    "topics_publish": "ros_publish_",
}


class RosToolsError(TableError):
    """The ROS tools allow-list cannot be used."""


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    KIND: ClassVar[str] = "msg"

    name: str = Field(description="absolute ROS name, e.g. /robot/dock")
    type: str = Field(description="interface type, pkg/srv/Name, pkg/action/Name or pkg/msg/Name")
    description: str = Field(min_length=1, description="what the tool does, for the model")
    tool: str = Field("", description="tool name for the model ('' = derived from the ROS name)")

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not ROS_NAME.match(value):
            raise ValueError(
                "must be an absolute ROS name like /robot/dock (letters, digits, underscores; no ~ or substitutions)"
            )
        return value

    @field_validator("type")
    @classmethod
    def _type(cls, value: str) -> str:
        if not re.match(rf"^[A-Za-z_][A-Za-z0-9_]*/{cls.KIND}/[A-Z][A-Za-z0-9]*$", value):
            raise ValueError(f"must be an interface type like pkg/{cls.KIND}/Name")
        return value

    @field_validator("tool")
    @classmethod
    def _tool(cls, value: str) -> str:
        if value and not TOOL_NAME.match(value):
            raise ValueError("must be 1-64 characters of letters, digits, '_' or '-'")
        return value


class ServiceEntry(_Entry):
    KIND: ClassVar[str] = "srv"
    timeout: float = Field(10.0, gt=0, description="seconds to wait for the response")


class ActionEntry(_Entry):
    KIND: ClassVar[str] = "action"
    timeout: float = Field(60.0, gt=0, description="seconds to wait for the result (then the goal is cancelled)")
    feedback_limit: int = Field(5, ge=0, description="most recent feedback messages reported with the result")


QosName = Literal["reliable", "latched", "best_effort"]
QOS_DOC = (
    "reliable (volatile), latched (reliable, transient local: the last message of a latched publisher "
    "arrives at once) or best_effort (sensor streams)"
)


class TopicReadEntry(_Entry):
    timeout: float = Field(2.0, gt=0, description="seconds to wait for a message when none has arrived yet")
    qos: QosName = Field("reliable", description=QOS_DOC)


class TopicPublishEntry(_Entry):
    qos: QosName = Field("reliable", description=QOS_DOC)
    timeout: float = Field(
        1.0,
        gt=0,
        description="seconds to wait for a subscriber when none is matched yet (the message is published either way)",
    )


def derived_tool_name(kind: str, ros_name: str) -> str:
    return PREFIXES[kind] + re.sub(r"[^A-Za-z0-9]", "_", ros_name.lstrip("/"))


def tool_name(kind: str, entry: _Entry) -> str:
    """The tool name the model sees for an entry of list `kind` (see the module doc)."""
    return entry.tool or derived_tool_name(kind, entry.name)


class RosToolsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    services: list[ServiceEntry] = []
    actions: list[ActionEntry] = []
    topics_read: list[TopicReadEntry] = []
    topics_publish: list[TopicPublishEntry] = []

    def entries(self) -> list[tuple[str, int, _Entry]]:
        """(list name, position, entry) of every entry, in file order per list."""
        return [(kind, i, e) for kind in PREFIXES for i, e in enumerate(getattr(self, kind))]

    def cross_check(self) -> list[tuple[str, str]]:
        problems = []
        seen_tools: dict[str, str] = {}
        seen_names: dict[tuple[str, str], str] = {}
        for kind, i, entry in self.entries():
            where = f"{kind}[{i}]"
            name = tool_name(kind, entry)
            if len(name) > 64:
                problems.append(
                    (
                        f"{where}.name",
                        f"derived tool name {name!r} is longer than 64 characters; set 'tool' to a shorter name",
                    )
                )
            if name in seen_tools:
                problems.append(
                    (
                        f"{where}.tool" if entry.tool else f"{where}.name",
                        f"tool name {name!r} is already used by {seen_tools[name]}",
                    )
                )
            seen_tools.setdefault(name, where)
            if (kind, entry.name) in seen_names:
                problems.append(
                    (f"{where}.name", f"{entry.name} is already listed at {seen_names[(kind, entry.name)]}")
                )
            seen_names.setdefault((kind, entry.name), where)
        return problems


def load_ros_tools(path: Path | str) -> RosToolsConfig:
    """The allow-list in `path`; a RosToolsError names file, key path and line of every problem."""
    return load_model(path, RosToolsConfig, error=RosToolsError)
