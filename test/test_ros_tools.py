"""ROS tools: the allow-list, the JSON <-> message converter and schemas (pure, table-driven),
then the tools against a real robot stand-in process (test/procs/robot_server.py), at the tool
level (a probe node in this process) and through the dialogue node with the scripted LLM."""

from __future__ import annotations

import asyncio
import json
import re
import warnings
from pathlib import Path

import pytest
from std_msgs.msg import String
from std_srvs.srv import SetBool, Trigger
from test_msgs.action import Fibonacci
from test_msgs.msg import Arrays, BasicTypes, BoundedSequences, Nested, Strings, UnboundedSequences

import dialogue_fake_llm as fake
from fay_msgs.msg import Transcript, Utterance
from fay_ros.agent.ros_convert import (
    ConversionError,
    FieldType,
    InterfaceError,
    import_interface,
    parse_type,
    properties,
    summarise,
    to_message,
    to_plain,
)
from fay_ros.agent.ros_tools_config import RosToolsError, load_ros_tools, tool_name
from fay_ros.agent.tool_config import load_tools_file
from fay_ros.common.paths import config_file
from fay_ros.dialogue.tools import ToolContext, ToolError
from harness import NodeProcess, RosProbe, dialogue_node, wait_until, write_tools_file

REPO = Path(__file__).resolve().parents[1]
CTX = ToolContext(owner="alice", question="")

# -- the converter and the schemas (pure) ----------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("int32", FieldType("int32")),
        ("boolean", FieldType("boolean")),
        ("string", FieldType("string")),
        ("string<22>", FieldType("string", 22)),
        ("string<=22>", FieldType("string", 22)),
        ("test_msgs/BasicTypes", FieldType("test_msgs/BasicTypes")),
        ("double[3]", FieldType("double", None, "array", 3)),
        ("test_msgs/Arrays[3]", FieldType("test_msgs/Arrays", None, "array", 3)),
        ("sequence<uint8>", FieldType("uint8", None, "sequence", None)),
        ("sequence<int32, 5>", FieldType("int32", None, "sequence", 5)),
        ("sequence<string<5>, 3>", FieldType("string", 5, "sequence", 3)),
        ("sequence<string<5>>", FieldType("string", 5, "sequence", None)),
        ("sequence<test_msgs/Nested>", FieldType("test_msgs/Nested", None, "sequence", None)),
    ],
)
def test_parse_type(text, expected):
    assert parse_type(text) == expected


@pytest.mark.parametrize("text", ["int33", "sequence<int32[3]>", "", "pkg/sub/Name/x"])
def test_parse_type_refuses_what_is_no_ros_type(text):
    with pytest.raises(InterfaceError):
        parse_type(text)


@pytest.mark.parametrize(
    "cls, field, schema",
    [
        (
            Fibonacci.Goal,
            "order",
            {"type": "integer", "description": "int32", "minimum": -(2**31), "maximum": 2**31 - 1},
        ),
        (SetBool.Request, "data", {"type": "boolean"}),
        (BasicTypes, "uint8_value", {"type": "integer", "description": "uint8", "minimum": 0, "maximum": 255}),
        (BasicTypes, "float64_value", {"type": "number", "description": "double"}),
        (Strings, "string_value", {"type": "string"}),
        (Strings, "bounded_string_value", {"type": "string", "maxLength": 22}),
        (
            Arrays,
            "int32_values",
            {
                "type": "array",
                "minItems": 3,
                "maxItems": 3,
                "items": {"type": "integer", "description": "int32", "minimum": -(2**31), "maximum": 2**31 - 1},
            },
        ),
        (BoundedSequences, "bool_values", {"type": "array", "maxItems": 3, "items": {"type": "boolean"}}),
        (UnboundedSequences, "string_values", {"type": "array", "items": {"type": "string"}}),
    ],
)
def test_schema_of_fields(cls, field, schema):
    assert properties(cls)[field] == schema


def test_schema_of_nested_and_empty_messages():
    assert properties(Trigger.Request) == {}
    nested = properties(Nested)["basic_types_value"]
    assert nested["type"] == "object" and nested["additionalProperties"] is False
    assert nested["properties"]["bool_value"] == {"type": "boolean"}
    json.dumps(properties(import_interface("test_msgs/msg/MultiNested")))  # deep nesting stays JSON


def test_import_interface():
    assert import_interface("std_srvs/srv/Trigger") is Trigger
    assert import_interface("test_msgs/action/Fibonacci") is Fibonacci
    assert import_interface("test_msgs/BasicTypes") is BasicTypes
    for bad, words in [
        ("no_such_pkg/srv/X", "cannot be imported"),
        ("std_srvs/srv/NoSuch", "has no 'NoSuch'"),
        ("std_srvs/srv/Trigger_Request", "not a ROS srv type"),
        ("std_srvs", "not an interface type name"),
    ]:
        with pytest.raises(InterfaceError, match=words):
            import_interface(bad)


def test_round_trip_of_basic_types_arrays_sequences_and_nesting():
    data = {
        "bool_value": True,
        "byte_value": 255,
        "char_value": 65,
        "float32_value": 1.5,
        "float64_value": -2.25,
        "int8_value": -128,
        "uint8_value": 255,
        "int16_value": -32768,
        "uint16_value": 65535,
        "int32_value": -5,
        "uint32_value": 2**32 - 1,
        "int64_value": -(2**63),
        "uint64_value": 2**64 - 1,
    }
    msg = to_message(BasicTypes, data)
    assert msg.uint64_value == 2**64 - 1 and msg.byte_value == b"\xff"
    assert to_plain(msg) == data
    arrays = to_message(
        Arrays,
        {
            "int32_values": [1, 2, 3],
            "byte_values": [0, 1, 2],
            "string_values": ["a", "b", ""],
            "basic_types_values": [{"int8_value": 1}, {}, {"bool_value": True}],
        },
    )
    plain = to_plain(arrays)
    assert plain["int32_values"] == [1, 2, 3] and plain["byte_values"] == [0, 1, 2]
    assert plain["string_values"] == ["a", "b", ""]
    assert [b["int8_value"] for b in plain["basic_types_values"]] == [1, 0, 0]
    assert plain["basic_types_values"][2]["bool_value"] is True
    seqs = to_plain(to_message(UnboundedSequences, {"float64_values": [0.5, 2], "uint8_values": [7]}))
    assert seqs["float64_values"] == [0.5, 2.0] and seqs["uint8_values"] == [7] and seqs["int32_values"] == []
    assert (
        to_plain(to_message(Nested, {"basic_types_value": {"int16_value": 9}}))["basic_types_value"]["int16_value"] == 9
    )
    assert to_message(Fibonacci.Goal, None).order == 0  # no arguments: the defaults
    json.dumps(to_plain(import_interface("test_msgs/msg/MultiNested")()))  # everything becomes JSON


@pytest.mark.parametrize(
    "cls, data, path, problem",
    [
        (Fibonacci.Goal, {"order": "five"}, "order", "expected an integer (int32), got a string"),
        (Fibonacci.Goal, {"order": 2**31}, "order", "out of range for int32"),
        (Fibonacci.Goal, {"order": True}, "order", "expected an integer"),
        (Fibonacci.Goal, {"order": 1.5}, "order", "expected an integer"),
        (Fibonacci.Goal, {"ordre": 3}, "ordre", "no such field in test_msgs/Fibonacci_Goal (fields: order)"),
        (Fibonacci.Goal, [3], "", "expected an object"),
        (SetBool.Request, {"data": "yes"}, "data", "expected true or false"),
        (Trigger.Request, {"name": "/robot/secret"}, "name", "no such field"),
        (BasicTypes, {"uint8_value": -1}, "uint8_value", "out of range for uint8 (0..255)"),
        (BasicTypes, {"byte_value": 256}, "byte_value", "out of range for octet"),
        (BasicTypes, {"float32_value": 1e39}, "float32_value", "out of range for float32"),
        (BasicTypes, {"float64_value": "1"}, "float64_value", "expected a number"),
        (Strings, {"bounded_string_value": "x" * 23}, "bounded_string_value", "at most 22 characters"),
        (Strings, {"string_value": 5}, "string_value", "expected a string"),
        (Arrays, {"int32_values": [1, 2]}, "int32_values", "expected exactly 3 items, got 2"),
        (Arrays, {"int32_values": 1}, "int32_values", "expected an array"),
        (BoundedSequences, {"int32_values": [1, 2, 3, 4]}, "int32_values", "at most 3 items"),
        (UnboundedSequences, {"int32_values": [1, "2"]}, "int32_values[1]", "expected an integer"),
        (
            Arrays,
            {"basic_types_values": [{}, {"int8_value": 300}, {}]},
            "basic_types_values[1].int8_value",
            "300 is out of range for int8",
        ),
        (Nested, {"basic_types_value": {"nope": 1}}, "basic_types_value.nope", "no such field"),
    ],
)
def test_conversion_errors_name_the_field(cls, data, path, problem):
    with pytest.raises(ConversionError) as info:
        to_message(cls, data)
    assert info.value.path == path
    assert problem in str(info.value)
    assert str(info.value).startswith(path or "(message)")


def test_summarise_cuts_long_lists_and_text():
    assert summarise({"a": [1, 2]}) == '{"a":[1,2]}'
    assert summarise(list(range(40)), max_items=3) == '[0,1,2,"... (37 more items)"]'
    assert summarise({"s": "x" * 100}, limit=20) == '{"s":"' + "x" * 14 + "... (88 more characters)"


# -- the allow-list file ---------------------------------------------------------------------


def test_example_allow_list_loads_with_derived_tool_names():
    config = load_tools_file(config_file("tools.example.yaml")).ros
    assert [tool_name(kind, e) for kind, _i, e in config.entries()] == [
        "ros_call_robot_dock",
        "ros_call_robot_light",
        "ros_action_fibonacci",
        "ros_read_robot_battery",
        "ros_publish_robot_say",
    ]
    assert config.services[0].timeout == 10 and config.actions[0].feedback_limit == 3
    assert config.topics_read[0].qos == "latched"


@pytest.mark.parametrize(
    "text, key, problem, line",
    [
        (
            "services:\n  - name: robot/dock\n    type: std_srvs/srv/Trigger\n    description: d\n",
            "services[0].name",
            "absolute ROS name",
            2,
        ),
        (
            "services:\n  - name: /robot/dock\n    type: std_srvs/msg/Trigger\n    description: d\n",
            "services[0].type",
            "pkg/srv/Name",
            3,
        ),
        (
            "actions:\n  - name: /f\n    type: test_msgs/action/Fibonacci\n    description: d\n    timout: 3\n",
            "actions[0].timout",
            "unknown key",
            5,
        ),
        (
            "services:\n  - name: /robot/dock\n    type: std_srvs/srv/Trigger\n    description: d\n    timeout: 0\n",
            "services[0].timeout",
            "greater than 0",
            5,
        ),
        (
            "services:\n  - name: /a/b\n    type: std_srvs/srv/Trigger\n    description: d\n"
            "  - name: /a_b\n    type: std_srvs/srv/Trigger\n    description: e\n",
            "services[1].name",
            "tool name 'ros_call_a_b' is already used by services[0]",
            5,
        ),
        (
            "topics_read:\n  - name: /x\n    type: std_msgs/msg/String\n    description: d\n    qos: fast\n",
            "topics_read[0].qos",
            "'reliable', 'latched' or 'best_effort'",
            5,
        ),
        (
            "services:\n  - name: /robot/dock\n    type: std_srvs/srv/Trigger\n",
            "services[0].description",
            "missing required key",
            2,
        ),
    ],
)
def test_allow_list_errors_name_file_key_and_line(tmp_path, text, key, problem, line):
    path = tmp_path / "ros_tools.yaml"
    path.write_text(text)
    with pytest.raises(RosToolsError) as info:
        load_ros_tools(path)
    message = str(info.value)
    assert "ros_tools.yaml" in message and f"{key}: " in message and problem in message, message
    assert f"(line {line})" in message, message


def test_allow_list_refuses_duplicate_keys(tmp_path):
    path = tmp_path / "ros_tools.yaml"
    path.write_text("services: []\nservices: []\n")
    with pytest.raises(RosToolsError, match="duplicate"):
        load_ros_tools(path)


# -- the tools against a real robot stand-in ---------------------------------------------------

ALLOW_LIST = """\
services:
  - {name: /robot/dock, type: std_srvs/srv/Trigger, description: Drive to the dock., timeout: 5}
  - {name: /robot/light, type: std_srvs/srv/SetBool, description: Head light on or off., timeout: 5}
actions:
  - {name: /fibonacci, type: test_msgs/action/Fibonacci, description: Fibonacci numbers., timeout: 30,
     feedback_limit: 2}
topics_read:
  - {name: /robot/battery, type: std_msgs/msg/Float32, description: Battery percent., qos: latched}
topics_publish:
  - {name: /robot/say, type: std_msgs/msg/String, description: Chest display text.}
"""


@pytest.fixture(scope="module")
def allow_list(tmp_path_factory):
    path = tmp_path_factory.mktemp("ros_tools") / "ros_tools.yaml"
    path.write_text(ALLOW_LIST)
    return path


@pytest.fixture(scope="module")
def robot():
    """The robot stand-in process and a probe that sees its events."""
    probe = RosProbe("ros_tools_test_probe")
    server = NodeProcess("procs.robot_server")
    try:
        server.wait_ready(probe=probe)
        events = probe.collect(String, "/robot/events")
        probe.wait_for_publishers("/robot/events")
        yield probe, server, events
    finally:
        server.stop()
        probe.close()


def stats(probe: RosProbe) -> dict[str, int]:
    """How often each service of the stand-in was called (asked of the stand-in itself)."""
    return json.loads(probe.call(Trigger, "/robot/stats", Trigger.Request()).message)


@pytest.fixture(scope="module")
def tools(robot, allow_list):
    """The ROS tools built on the probe node (what the dialogue node does with its own node)."""
    from fay_ros.ros_side.ros_tools import RosTools

    probe, _server, _events = robot
    built = RosTools.from_file(probe.node, allow_list)
    yield {t.name: t for t in built.tools}
    built.close()


def run(coro):
    return asyncio.run(coro)


def test_tools_are_exactly_the_allow_list_with_schemas_from_the_types(tools):
    assert sorted(tools) == [
        "ros_action_fibonacci",
        "ros_call_robot_dock",
        "ros_call_robot_light",
        "ros_publish_robot_say",
        "ros_read_robot_battery",
    ]
    assert tools["ros_call_robot_light"].parameters == {"data": {"type": "boolean"}}
    assert tools["ros_action_fibonacci"].parameters["order"]["type"] == "integer"
    assert tools["ros_publish_robot_say"].parameters == {"data": {"type": "string"}}
    assert tools["ros_read_robot_battery"].parameters == {}
    assert "(ROS service /robot/dock, std_srvs/srv/Trigger)" in tools["ros_call_robot_dock"].description


def test_service_tool_calls_the_real_service(robot, tools):
    probe, _server, events = robot
    before = stats(probe).get("/robot/light", 0)
    answer = run(tools["ros_call_robot_light"].executor({"data": True}, CTX))
    assert json.loads(answer) == {"success": True, "message": "light on"}
    events.wait_for_match(lambda m: m.data == "call /robot/light True")
    assert stats(probe)["/robot/light"] == before + 1


def test_invalid_arguments_are_refused_before_any_call(robot, tools):
    probe, _server, _events = robot
    before = stats(probe)
    with pytest.raises(ToolError, match=r"invalid arguments: request.data: expected true or false"):
        run(tools["ros_call_robot_light"].executor({"data": "on"}, CTX))
    # a name in the arguments never addresses another service: it is just an unknown field
    with pytest.raises(ToolError, match=r"request.name: no such field"):
        run(tools["ros_call_robot_dock"].executor({"name": "/robot/secret"}, CTX))
    assert stats(probe) == before


def test_action_tool_collects_feedback_and_summarises_the_result(robot, tools):
    answer = run(tools["ros_action_fibonacci"].executor({"order": 6}, CTX))
    assert answer.startswith('status: succeeded; result: {"sequence":[0,1,1,2,3,5,8]}'), answer
    # Feedback (a topic) and the result (a service answer) travel separately: the result may
    # overtake the last feedback messages. What did arrive is reported, the last 2 at most.
    match = re.search(r"; feedback \((\d+) received, last (\d+)\): (.*)$", answer)
    assert match, answer
    received, shown, feedback = int(match[1]), int(match[2]), json.loads(match[3])
    assert 1 <= received <= 5 and shown == min(received, 2) == len(feedback)
    assert all(f["sequence"] == [0, 1, 1, 2, 3, 5, 8][: len(f["sequence"])] for f in feedback)


def test_cancelling_the_tool_task_cancels_the_goal(robot, tools):
    probe, _server, events = robot
    events.clear()

    async def scenario() -> None:
        task = asyncio.create_task(tools["ros_action_fibonacci"].executor({"order": 1000}, CTX))
        # the goal runs (the server holds it after its first feedback) ...
        await asyncio.to_thread(events.wait_for_match, lambda m: m.data == "goal 1000")
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(scenario())
    # ... and the cancel reached the server before the task ended, which ended the goal
    events.wait_for_match(lambda m: m.data == "goal canceled")
    # From this goal on: an earlier test's last event ("goal succeeded") may arrive after the
    # clear, as the event topic and the action's result travel separately.
    seen = [m.data for m in events.messages]
    assert seen[seen.index("goal 1000") :][:3] == ["goal 1000", "cancel requested", "goal canceled"], seen


def test_a_goal_cancelled_before_it_was_accepted_is_cancelled_once_accepted(robot, tools):
    probe, _server, events = robot
    events.clear()

    async def scenario() -> None:
        task = asyncio.create_task(tools["ros_action_fibonacci"].executor({"order": 999}, CTX))
        # the server holds the goal request: the tool has no goal handle yet
        await asyncio.to_thread(events.wait_for_match, lambda m: m.data == "goal request 999")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    run(scenario())
    probe.call(Trigger, "/robot/release", Trigger.Request())  # now the server accepts it
    events.wait_for_match(lambda m: m.data == "goal canceled")
    seen = [m.data for m in events.messages]
    seen = seen[seen.index("goal request 999") :][:4]  # an earlier test's last event may come after the clear
    # the execution's start and the cancel request race once the goal is accepted: either order
    assert seen[0] == "goal request 999" and seen[3] == "goal canceled", seen
    assert sorted(seen[1:3]) == ["cancel requested", "goal 999"], seen


def test_action_timeout_cancels_the_goal(robot, allow_list, tmp_path):
    from fay_ros.ros_side.ros_tools import RosTools

    probe, _server, events = robot
    events.clear()
    path = tmp_path / "short.yaml"
    path.write_text(
        "actions:\n  - {name: /fibonacci, type: test_msgs/action/Fibonacci, description: f, "
        "timeout: 1.5, tool: slow_fib}\n"
    )
    built = RosTools.from_file(probe.node, path)
    try:
        with pytest.raises(ToolError, match=r"did not finish within 1.5s; the goal was cancelled"):
            run(built.tools[0].executor({"order": 1000}, CTX))
        events.wait_for_match(lambda m: m.data == "goal canceled")
        assert "cancel requested" in [m.data for m in events.messages]
    finally:
        built.close()


def test_topic_tools_read_the_latest_message_and_publish(robot, tools):
    _probe, _server, events = robot
    answer = run(tools["ros_read_robot_battery"].executor({}, CTX))
    assert answer.startswith("latest message (") and answer.endswith('{"data":87.5}'), answer
    wait_until(lambda: _subscribed(robot[0], "/robot/say"), message="the stand-in's /robot/say subscription")
    assert (
        run(tools["ros_publish_robot_say"].executor({"data": "hello"}, CTX)) == "published on /robot/say (1 subscriber)"
    )
    events.wait_for_match(lambda m: m.data == "heard hello")


def _subscribed(probe: RosProbe, topic: str) -> bool:
    return any(info.node_name == "robot_server" for info in probe.node.get_subscriptions_info_by_topic(topic))


def test_service_tool_reports_a_missing_service(robot, tmp_path):
    from fay_ros.ros_side.ros_tools import RosTools

    path = tmp_path / "absent.yaml"
    path.write_text("services:\n  - {name: /robot/absent, type: std_srvs/srv/Trigger, description: d, timeout: 0.3}\n")
    built = RosTools.from_file(robot[0].node, path)
    try:
        with pytest.raises(ToolError, match="service /robot/absent is not available"):
            run(built.tools[0].executor({}, CTX))
    finally:
        built.close()


def test_an_uninstalled_type_is_a_config_error_naming_the_entry(robot, tmp_path):
    from fay_ros.common.errors import ConfigError
    from fay_ros.ros_side.ros_tools import RosTools

    path = tmp_path / "bad.yaml"
    path.write_text("services:\n  - {name: /x, type: no_such_pkg/srv/X, description: d}\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: services\[0\] \(/x\): .*no_such_pkg.*cannot be imported"):
        RosTools.from_file(robot[0].node, path)


def test_a_ros_future_completing_after_its_waiter_is_gone_raises_nothing_in_the_executor():
    """A cancelled tool leaves rclpy futures behind (the goal's result arrives later); their
    completion runs in the executor, where an exception would stop the node's spin."""
    from rclpy.task import Future

    from fay_ros.ros_side.ros_tools import await_ros_future

    future = Future()

    async def give_up() -> None:
        waiter = asyncio.create_task(await_ros_future(future))
        await asyncio.sleep(0)  # let the waiter register its callback
        waiter.cancel()

    asyncio.run(give_up())  # the waiting loop is closed now
    with warnings.catch_warnings():
        # without an executor rclpy runs the callback here and turns its exception into a warning
        warnings.simplefilter("error")
        future.set_result("late")
    assert future.result() == "late"


# -- through the dialogue node ---------------------------------------------------------------


@pytest.fixture(scope="module")
def dialogue(robot, allow_list, llm):
    probe, _server, events = robot
    tools_file = write_tools_file(allow_list.with_name("tools.yaml"), ros=ALLOW_LIST)
    with dialogue_node(
        probe,
        {
            "base_url": llm.base_url,
            "model": "scripted",
            "first_token_timeout": 5.0,
            "memory": False,
            "tool_timeout": 20.0,
            "tools_file": str(tools_file),
        },
    ) as rig:
        yield rig


def ask(dialogue, llm, text: str, *script) -> list[Utterance]:
    node, replies, text_input = dialogue
    llm.reset()
    replies.clear()
    llm.script(*script)
    text_input.publish(Transcript(text=text, user_id="alice", language="en", is_final=True, confidence=0.9))
    replies.wait_for(lambda msgs: next((m for m in msgs if m.is_end), None), what="the end of the reply")
    return list(replies.messages)


def tool_results(llm) -> list[str]:
    """The tool results the model was sent, once each (later requests repeat earlier ones)."""
    results = {m["tool_call_id"]: m["content"] for r in llm.requests for m in r["messages"] if m.get("role") == "tool"}
    return list(results.values())


def test_dialogue_calls_the_service_tool(robot, dialogue, llm):
    probe = robot[0]
    before = stats(probe).get("/robot/dock", 0)
    msgs = ask(
        dialogue,
        llm,
        "Please go to your dock.",
        fake.judge_tool("dock"),
        fake.tool_call("ros_call_robot_dock", "{}"),
        fake.loop_finish(),
        fake.text("I am docked."),
    )
    assert msgs[-1].text == "I am docked."
    assert stats(probe)["/robot/dock"] == before + 1
    offered = {t["function"]["name"] for t in llm.requests[1]["tools"]}
    assert {"ros_call_robot_dock", "ros_action_fibonacci", "ros_read_robot_battery"} <= offered
    assert json.loads(tool_results(llm)[0]) == {"success": True, "message": "docked"}


def test_dialogue_runs_the_action_tool(robot, dialogue, llm):
    msgs = ask(
        dialogue,
        llm,
        "Compute five Fibonacci numbers.",
        fake.judge_tool("fibonacci"),
        fake.tool_call("ros_action_fibonacci", json.dumps({"order": 5})),
        fake.loop_finish(),
        fake.text("Here they are."),
    )
    assert msgs[-1].text == "Here they are."
    [result] = tool_results(llm)
    assert result.startswith('status: succeeded; result: {"sequence":[0,1,1,2,3,5]}'), result


def test_dialogue_cannot_reach_what_is_not_allow_listed(robot, dialogue, llm):
    probe = robot[0]
    before = stats(probe)
    ask(
        dialogue,
        llm,
        "Call the secret service.",
        fake.judge_tool("secret"),
        fake.tool_call("ros_call_robot_secret", "{}", call_id="c1"),
        fake.tool_call("ros_call_robot_dock", json.dumps({"name": "/robot/secret"}), call_id="c2"),
        fake.tool_call("ros_publish_robot_events", json.dumps({"data": "goal 7"}), call_id="c3"),
        fake.loop_finish(),
        fake.text("I cannot do that."),
    )
    results = tool_results(llm)
    assert results[0].startswith("error: no tool named 'ros_call_robot_secret'"), results
    assert "no such field" in results[1], results
    assert results[2].startswith("error: no tool named 'ros_publish_robot_events'"), results
    assert not probe.node.get_publishers_info_by_topic("/robot/events")[1:], "only the stand-in publishes events"
    assert stats(probe) == before  # the stand-in got no call at all: not the secret, not the dock
    assert "/robot/secret" not in before


def test_dialogue_node_refuses_a_bad_allow_list_at_start(robot, tmp_path, llm):
    path = tmp_path / "bad_tools.yaml"
    write_tools_file(
        path, ros="services:\n  - name: /robot/dock\n    type: std_srvs/srv/Trigger\n    descripton: typo\n"
    )
    node = NodeProcess(
        "fay_ros.nodes.dialogue",
        {"base_url": llm.base_url, "model": "scripted", "memory": False, "tools_file": str(path)},
        name="dialogue_bad_tools",
    )
    try:
        assert node.wait_exit() == 2  # a configuration error: the bring-up does not restart it
        assert "bad_tools.yaml: ros.services[0].descripton: unknown key (misspelt?) (line 6)" in node.output()
    finally:
        node.stop()
