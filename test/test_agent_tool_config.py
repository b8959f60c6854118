"""The one tools file: built-in tools, MCP servers and the ROS allow-list in one place."""

from __future__ import annotations

import pytest

from fay_ros.agent.tool_config import BUILTIN_TOOLS, ToolsFileError, load_tools_file
from fay_ros.common.paths import config_file


def test_the_default_file_lists_the_built_in_tools_only():
    tools = load_tools_file(config_file("tools.yaml"))
    assert tools.builtin == list(BUILTIN_TOOLS)
    assert tools.mcp.servers == [] and tools.ros.entries() == []


def test_the_example_lists_every_kind_of_tool():
    tools = load_tools_file(config_file("tools.example.yaml"))
    assert tools.builtin == list(BUILTIN_TOOLS)
    assert [s.name for s in tools.mcp.servers] == ["files", "weather"]
    assert [kind for kind, _i, _e in tools.ros.entries()] == [
        "services",
        "services",
        "actions",
        "topics_read",
        "topics_publish",
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("builtin: [current_time]\ntool: [x]\n", "tool: unknown key (misspelt?) (line 2)"),
        ("builtin: [current_time, current_time]\n", "builtin: listed twice: ['current_time'] (line 1)"),
        (
            "ros:\n  services:\n    - {name: robot/dock, type: std_srvs/srv/Trigger, description: d}\n",
            "ros.services[0].name",
        ),
        (
            "ros:\n  services:\n    - {name: /a, type: std_srvs/srv/Trigger, description: d}\n"
            "    - {name: /a, type: std_srvs/srv/Trigger, description: d}\n",
            "ros.services[1].name",
        ),
        ("mcp:\n  servers:\n    - {name: a, tools: [x]}\n", "mcp.servers[0]"),
        ("builtin: [a]\nbuiltin: [b]\n", "line 2"),
    ],
)
def test_a_bad_tools_file_names_the_key_and_line(tmp_path, text, expected):
    path = tmp_path / "tools.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ToolsFileError) as error:
        load_tools_file(path)
    assert str(path.name) in str(error.value) and expected in str(error.value), str(error.value)
