"""The bring-up's one node list: options, parameters from config/companion.yaml, and the
launch file built from the same place."""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from pathlib import Path

import pytest
import yaml

from fay_ros.bringup import graph
from harness import REPO


def test_defaults_start_every_node_and_the_embedded_llm_and_web():
    names = [n.name for n in graph.companion_nodes()]
    assert names == [name for name, _m in graph.NODE_MODULES]
    assert {"mic", "asr", "dialogue", "memory", "tts", "action_semantics", "servo_mapper", "led_mapper"} <= set(names)
    procs = {p.name: p for p in graph.companion_processes()}
    assert set(procs) == {"llm", "web", "status"}
    # the bring-up reports once when every node it started is ready (or which is not, and why)
    status = procs["status"]
    assert not status.respawn and status.args[:1] == ("status",)
    assert status.args[status.args.index("--nodes") + 1] == ",".join([*names, "llm"])  # the embedded LLM node too
    dialogue = next(n for n in graph.companion_nodes() if n.name == "dialogue")
    assert dialogue.parameters["base_url"] == graph.embedded_llm_url()


def test_parameters_come_from_companion_yaml(tmp_path):
    params = yaml.safe_load((REPO / "config/companion.yaml").read_text())
    yaml_tts = params["/**/tts"]["ros__parameters"]
    tts = next(n for n in graph.companion_nodes() if n.name == "tts")
    assert tts.parameters == yaml_tts
    custom = tmp_path / "mine.yaml"
    custom.write_text("/**/tts:\n  ros__parameters:\n    rate_wpm: 200\n")
    tts = next(n for n in graph.companion_nodes({"config": str(custom)}) if n.name == "tts")
    assert tts.parameters == {"rate_wpm": 200}


def test_launch_arguments_override_the_yaml(tmp_path):
    wav = tmp_path / "q.wav"
    wav.write_bytes(b"")
    nodes = {
        n.name: n
        for n in graph.companion_nodes(
            {
                "llm_base_url": "http://10.0.0.5:8000/v1",
                "llm_model": "qwen",
                "llm_api_key_env": "DEEPSEEK_KEY",
                "asr_backend": "vosk",
                "asr_model": "/models/vosk-small-en",
                "asr_language": "en",
                "audio_source": str(wav),
            }
        )
    }
    assert nodes["dialogue"].parameters["base_url"] == "http://10.0.0.5:8000/v1"
    assert nodes["dialogue"].parameters["model"] == "qwen"
    assert nodes["memory"].parameters["llm_base_url"] == "http://10.0.0.5:8000/v1"
    assert (
        nodes["dialogue"].parameters["api_key_env"] == nodes["memory"].parameters["llm_api_key_env"] == "DEEPSEEK_KEY"
    )
    assert {k: nodes["asr"].parameters[k] for k in ("backend", "model", "language")} == {
        "backend": "vosk",
        "model": "/models/vosk-small-en",
        "language": "en",
    }
    assert nodes["mic"].parameters["source"] == str(wav)
    # A remote LLM needs no embedded server.
    assert "llm" not in {p.name for p in graph.companion_processes({"llm_base_url": "http://10.0.0.5:8000/v1"})}


def test_a_wav_source_waits_for_the_other_nodes_and_the_embedded_llm(tmp_path):
    wav = tmp_path / "q.wav"
    wav.write_bytes(b"")

    def mic(**opts):
        return next(n for n in graph.companion_nodes(opts) if n.name == "mic").parameters

    others = [name for name, _m in graph.NODE_MODULES if name != "mic"]
    assert mic(audio_source=str(wav))["wait_for_nodes"] == [*others, "llm"]
    assert mic(audio_source=str(wav))["wait_for_nodes_s"] == graph.READY_WAIT
    assert mic(audio_source=str(wav), llm_base_url="http://10.0.0.5:8000/v1")["wait_for_nodes"] == others
    assert mic(audio_source=str(wav), nodes="asr,mic,tts")["wait_for_nodes"] == ["tts", "asr", "llm"]
    assert "wait_for_nodes" not in mic(audio_source="mic")  # a microphone never waits
    custom = tmp_path / "mine.yaml"
    custom.write_text("/**/mic:\n  ros__parameters:\n    wait_for_nodes: [asr]\n")
    assert mic(audio_source=str(wav), config=str(custom))["wait_for_nodes"] == ["asr"]


def test_web_and_bridge_switches():
    def web(**opts):
        return next((p.args for p in graph.companion_processes(opts) if p.name == "web"), None)

    assert web(use_web="false", use_rosbridge="false") is None
    assert "--no-page" in web(use_web="false")
    assert ["--bridge", "none"] == list(web(use_rosbridge="false")[-2:])
    assert "/robot1" in web(namespace="robot1")


def test_audio_source_auto_without_microphone_plays_the_bundled_demo(monkeypatch):
    monkeypatch.setattr(graph, "has_input_device", lambda: False)
    source, note = graph.resolve_audio_source("auto")
    assert Path(source) == graph.demo_wav() and graph.demo_wav().is_file()
    assert "no microphone" in note
    monkeypatch.setattr(graph, "has_input_device", lambda: True)
    assert graph.resolve_audio_source("auto")[0] == ""
    assert graph.resolve_audio_source("mic")[0] == ""


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="unknown bring-up option.*'asr_backed'"):
        graph.parse_options({"asr_backed": "vosk"})
    with pytest.raises(ValueError, match="unknown node.*'tss'"):
        graph.companion_nodes({"nodes": "tss"})
    with pytest.raises(ValueError, match="use_llm_server"):
        graph.companion_processes({"use_llm_server": "maybe"})


def test_bad_parameter_file_is_named(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("/**/tts:\n  rate_wpm: 200\n")
    with pytest.raises(ValueError, match=r"bad\.yaml.*ros__parameters"):
        graph.companion_nodes({"config": str(bad)})
    with pytest.raises(FileNotFoundError, match="missing.yaml"):
        graph.companion_nodes({"config": str(tmp_path / "missing.yaml")})


def test_nodes_subset_keeps_order():
    assert [n.name for n in graph.companion_nodes({"nodes": "timeline, tts"})] == ["tts", "timeline"]


class _Recorder:
    """Records constructor arguments; stands in for a launch action class."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


def _load_launch_file_with_recorders(monkeypatch):
    """Load launch/companion.launch.py with `launch`/`launch_ros` replaced by recorders.

    ros2 launch is not installable here; this checks what the launch file builds from the
    graph (every node, its parameters, respawn), not launch's own behaviour.
    """
    launch = types.ModuleType("launch")
    launch.LaunchDescription = _Recorder
    actions = types.ModuleType("launch.actions")
    for name in (
        "DeclareLaunchArgument",
        "ExecuteProcess",
        "LogInfo",
        "OpaqueFunction",
        "RegisterEventHandler",
        "TimerAction",
    ):
        setattr(actions, name, type(name, (_Recorder,), {}))
    event_handlers = types.ModuleType("launch.event_handlers")
    event_handlers.OnProcessExit = type("OnProcessExit", (_Recorder,), {})
    substitutions = types.ModuleType("launch.substitutions")

    class LaunchConfiguration:
        def __init__(self, name):
            self.name = name

        def perform(self, context):
            return context[self.name]

    substitutions.LaunchConfiguration = LaunchConfiguration
    launch_ros = types.ModuleType("launch_ros")
    launch_ros_actions = types.ModuleType("launch_ros.actions")
    launch_ros_actions.Node = type("Node", (_Recorder,), {})
    ament = types.ModuleType("ament_index_python.packages")
    ament.get_package_prefix = lambda package: f"/opt/fay/{package}"
    monkeypatch.setitem(sys.modules, "ament_index_python.packages", ament)
    for name, module in {
        "launch": launch,
        "launch.actions": actions,
        "launch.event_handlers": event_handlers,
        "launch.substitutions": substitutions,
        "launch_ros": launch_ros,
        "launch_ros.actions": launch_ros_actions,
    }.items():
        monkeypatch.setitem(sys.modules, name, module)
    spec = importlib.util.spec_from_file_location("companion_launch", REPO / "launch/companion.launch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_launch_file_builds_the_graph_nodes(monkeypatch):
    module = _load_launch_file_with_recorders(monkeypatch)
    description = module.generate_launch_description()
    declared = [a for a in description.args[0] if type(a).__name__ == "DeclareLaunchArgument"]
    assert [a.args[0] for a in declared] == list(graph.LAUNCH_ARGUMENTS)
    opaque = description.args[0][-1]
    context = {name: default for name, (default, _d) in graph.LAUNCH_ARGUMENTS.items()}
    context["llm_model"] = "tiny"
    actions = opaque.kwargs["function"](context)
    nodes = [a for a in actions if type(a).__name__ == "Node"]
    expected = graph.companion_nodes(context)
    assert [n.kwargs["executable"] for n in nodes] == [s.executable for s in expected]
    assert [n.kwargs["parameters"] for n in nodes] == [[s.parameters] for s in expected]
    # launch's own respawn is off (it would restart a configuration error forever); each
    # process has an exit handler instead (see the respawn tests below).
    assert all(
        n.kwargs["respawn"] is False and n.kwargs["namespace"] == "/fay" and n.kwargs["package"] == "fay_ros"
        for n in nodes
    )
    watched = [a.args[0].kwargs["target_action"] for a in actions if type(a).__name__ == "RegisterEventHandler"]
    respawned = {p.name for p in graph.companion_processes(context) if p.respawn}
    assert watched == [
        a
        for a in actions
        if type(a).__name__ == "Node" or (type(a).__name__ == "ExecuteProcess" and a.kwargs["name"] in respawned)
    ]
    processes = [a for a in actions if type(a).__name__ == "ExecuteProcess"]
    assert [p.kwargs["name"] for p in processes] == [p.name for p in graph.companion_processes(context)]
    assert [p.kwargs["cmd"] for p in processes] == [
        ["/opt/fay/fay_ros/lib/fay_ros/fay-ros", *p.args] for p in graph.companion_processes(context)
    ]


def test_one_respawn_rule_crash_yes_configuration_error_no():
    from fay_ros.common.node_main import EXIT_CONFIG_ERROR

    assert graph.EXIT_CONFIG_ERROR == EXIT_CONFIG_ERROR
    assert graph.respawn_after_exit(EXIT_CONFIG_ERROR) is False
    assert all(graph.respawn_after_exit(code) for code in (1, -11, -9, 0, 134))


def _launch_actions(monkeypatch):
    module = _load_launch_file_with_recorders(monkeypatch)
    opaque = module.generate_launch_description().args[0][-1]
    context = {name: default for name, (default, _d) in graph.LAUNCH_ARGUMENTS.items()}
    return opaque.kwargs["function"](context)


def _exit_handler(actions, kind, name):
    """(the action named `name`, the on_exit callback of the handler that watches it)."""
    for entity in actions:
        if type(entity).__name__ == "RegisterEventHandler":
            handler = entity.args[0]
            target = handler.kwargs["target_action"]
            if type(target).__name__ == kind and target.kwargs["name"] == name:
                assert type(handler).__name__ == "OnProcessExit" and handler.kwargs["handle_once"] is True
                assert actions.index(entity) < actions.index(target), "handler registered before the start"
                return target, handler.kwargs["on_exit"]
    raise AssertionError(f"no exit handler for {kind} {name}")


def _exited(on_exit, code, shutting_down=False):
    """Fire a ProcessExited with this return code at the handler; what does the launch file return?"""
    return on_exit(types.SimpleNamespace(returncode=code), types.SimpleNamespace(is_shutdown=shutting_down)) or []


@pytest.mark.parametrize("kind, name", [("Node", "asr"), ("Node", "mic"), ("ExecuteProcess", "web")])
def test_launch_file_respawns_after_a_crash_but_not_after_a_configuration_error(monkeypatch, kind, name):
    actions = _launch_actions(monkeypatch)
    original, on_exit = _exit_handler(actions, kind, name)

    # Exit code 2 (configuration error): said once, nothing started again.
    returned = _exited(on_exit, 2)
    assert [type(a).__name__ for a in returned] == ["LogInfo"]
    assert "configuration error" in returned[0].kwargs["msg"] and name in returned[0].kwargs["msg"]

    # Launch shutting down: the exit is expected, nothing started again.
    assert _exited(on_exit, -2, shutting_down=True) == []

    for code in (1, -11):  # a crash: error exit, or killed by SIGSEGV
        returned = _exited(on_exit, code)
        timers = [a for a in returned if type(a).__name__ == "TimerAction"]
        assert len(timers) == 1, returned
        assert timers[0].kwargs["period"] == graph.RESPAWN_DELAY
        fresh, fresh_on_exit = _exit_handler(list(timers[0].kwargs["actions"]), kind, name)
        # A fresh action (launch runs an action once) with the same command and its own handler.
        assert fresh is not original and fresh.kwargs == original.kwargs
        assert fresh_on_exit is not on_exit
        # The respawned process follows the same rule.
        assert [type(a).__name__ for a in _exited(fresh_on_exit, 2)] == ["LogInfo"]
        assert [type(a).__name__ for a in _exited(fresh_on_exit, -11)] == ["LogInfo", "TimerAction"]


def test_supervisor_restarts_a_crash_but_not_a_configuration_error(tmp_path):
    """`fay-ros up`'s supervisor with real child processes: one exits 2, one is killed (SIGKILL:
    a crash by signal that leaves no core file)."""
    from fay_ros.bringup.graph import NodeSpec
    from fay_ros.bringup.supervisor import Supervisor
    from harness import wait_until

    (tmp_path / "exits_with_config_error.py").write_text("raise SystemExit(2)\n")
    (tmp_path / "gets_killed.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    lines: list[str] = []
    sup = Supervisor(
        [NodeSpec("config", "exits_with_config_error", {"db_path": "x.db"}), NodeSpec("crash", "gets_killed")],
        "/fay",
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
        log=lines.append,
        max_backoff=0.1,
    )

    def crash_restarted_twice_and_config_gone():
        sup.poll_once()
        return sup.restarts()["crash"] >= 2 and "config" not in sup.pids()

    params_file = Path(sup.command(NodeSpec("config", "exits_with_config_error", {"db_path": "x.db"}))[-1])
    assert params_file.is_file()
    sup.start()
    try:
        wait_until(
            crash_restarted_twice_and_config_gone,
            timeout=30,
            message=lambda: f"two restarts of the crashing child and the other one's exit; log: {lines}",
        )
        sup.poll_once()  # "config" has exited: at the latest this poll decides about it
        assert sup.restarts()["config"] == 0
        assert "[fay-ros up] config exited with 2 (a configuration error); not restarting" in lines
        assert any(line.startswith("[fay-ros up] crash exited with -9; restarting") for line in lines)
    finally:
        sup.stop()
    # the parameter files go with the bring-up (each run left a directory of them behind)
    assert not params_file.parent.exists(), f"{params_file.parent} is left after stop()"


def test_parameter_file_names_only_companion_nodes_once(tmp_path):
    """A misspelt node (its parameters would never reach it) and a node listed twice (one
    list would silently win) are refused with the file, the key and its line."""
    from fay_ros.common.errors import ConfigError

    typo = tmp_path / "typo.yaml"
    typo.write_text("/**/tts:\n  ros__parameters: {}\n/**/dialouge:\n  ros__parameters:\n    model: x\n")
    with pytest.raises(ConfigError) as info:
        graph.companion_nodes({"config": str(typo)})
    assert str(info.value).startswith(f"{typo}: /**/dialouge: 'dialouge' is not a node of the companion; known: ")
    assert str(info.value).endswith("(line 3)")

    twice = tmp_path / "twice.yaml"
    twice.write_text("/**/tts:\n  ros__parameters: {rate_wpm: 150}\n/fay/tts:\n  ros__parameters: {rate_wpm: 200}\n")
    with pytest.raises(
        ConfigError,
        match=r"twice\.yaml: /fay/tts: node 'tts' already has parameters under "
        r"'/\*\*/tts' \(line 3\)",
    ):
        graph.load_parameters(twice)

    empty = tmp_path / "empty.yaml"
    empty.write_text("/**/tts:\n  ros__parameters:\n")
    assert graph.load_parameters(empty) == {"tts": {}}
