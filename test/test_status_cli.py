"""`fay-ros status`: which nodes are ready, and why the others are not (readiness + /diagnostics)."""

from __future__ import annotations

import subprocess
import sys

from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import QoSProfile

from fay_ros.bringup.status_board import StatusBoard
from fay_ros.common.diagnostics import status_name
from harness import REPO, ros_environment, wait_until

MODULE = "procs.managed_probe"


def _status(*args: str, timeout: float = 90) -> subprocess.CompletedProcess:
    env = ros_environment()
    return subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "status", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=str(REPO),
    )


def test_waits_until_the_nodes_are_ready(ros, launch_node):
    node = launch_node(MODULE, name="managed_probe")
    done = _status("--nodes", "managed_probe", "--wait", "60")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "companion ready: 1 node(s)" in done.stdout
    assert "managed_probe  OK" in done.stdout and node.alive()


def test_a_node_that_is_not_ready_is_named_with_its_reason(ros, launch_node):
    launch_node(MODULE, {"fail_reason": "model file /models/missing.bin not found"}, name="managed_probe")
    ros.readiness("managed_probe").wait_for(lambda msgs: msgs and msgs[-1].data is False)

    def with_reason():  # again until discovery has brought the node's /diagnostics in within the wait
        done = _status("--nodes", "managed_probe,nobody_here", "--wait", "4")
        return done if "missing.bin" in done.stdout else None

    done = wait_until(with_reason, 60, interval=0.0, message="the reason in `fay-ros status`")
    assert done.returncode == 1
    assert (
        "not ready after 4 s: managed_probe: not ready: model file /models/missing.bin not found; "
        "nobody_here: not running (yet)" in done.stdout
    )


def test_without_nodes_it_lists_the_companion_and_the_embedded_model_once_it_runs(ros, launch_node):
    namespace = "/status_test"  # its own: the session's embedded model is /fay/llm
    done = _status("--namespace", namespace)
    assert done.returncode == 1 and "dialogue" in done.stdout and "llm" not in done.stdout, done.stdout
    # a lifecycle node called llm, as `fay-ros llm` runs
    launch_node(MODULE, name="llm", namespace=namespace).wait_ready(probe=ros)

    def table_with_llm():  # one short look each: again until discovery has brought its ready in
        done = _status("--namespace", namespace)
        rows = {line.split()[0]: line for line in done.stdout.splitlines() if line and not line.startswith("[")}
        return (done, rows) if "llm" in rows else None

    done, rows = wait_until(table_with_llm, 60, interval=0.0, message="llm in the table of `fay-ros status`")
    assert done.returncode == 1, done.stdout
    assert rows["llm"].split()[1:] == ["OK", "ready"] and "not running (yet)" in rows["tts"]
    assert "llm:" not in done.stdout.splitlines()[-1]  # not among the nodes that are not ready


def test_an_optional_node_joins_the_board_only_once_heard():
    board = StatusBoard(["a"], optional=["llm", "a"])
    assert board.watched == ["a", "llm"] and list(board.nodes) == ["a"]
    board.on_ready("a", True)
    board.on_state("llm", 0, "ready")  # its health alone does not put it on the board
    assert board.all_ready() and list(board.nodes) == ["a"]
    board.on_ready("llm", False)
    assert not board.all_ready() and board.not_ready() == {"llm": "not ready"}


def test_the_board_tells_ready_not_ready_and_never_heard():
    board = StatusBoard(["a", "b", "c"])
    board.on_ready("a", True)
    board.on_state("a", 0, "ready")
    board.on_ready("b", False)
    board.on_state("b", 2, "not ready: no input device")
    assert not board.all_ready()
    assert board.not_ready() == {"b": "not ready: no input device", "c": "not running (yet)"}
    board.on_ready("b", True)
    board.on_ready("c", True)
    assert board.all_ready()
    assert StatusBoard([]).all_ready() is False


def test_a_ready_node_whose_health_still_says_configuring_is_not_settled():
    """Readiness and health come on two topics: the "configuring" warning sent before `~/ready`
    can arrive after it (a loaded CI machine showed "managed_probe  WARN   ready")."""
    board = StatusBoard(["a"])
    board.on_state("a", 1, "configuring")
    board.on_ready("a", True)
    assert board.all_ready() and not board.health_agrees()
    board.on_state("a", 0, "ready")
    assert board.health_agrees() and "a  OK     ready" in board.table()


def test_status_names_carry_the_namespace():
    assert status_name("tts", "state") == "fay/tts: state"  # the default namespace, /fay
    assert status_name("tts", "state", "/robot2") == "robot2/tts: state"
    assert status_name("tts", "state", "/") == "tts: state"


def test_two_companions_keep_their_health_apart_on_the_one_diagnostics_topic(ros, launch_node):
    """One node name in two namespaces: each companion's `fay-ros status` reads its own node's
    health, not the other's, although both publish on /diagnostics."""
    health = ros.collect(DiagnosticArray, "/diagnostics", QoSProfile(depth=50))
    launch_node(MODULE, {"fail_reason": "no input device"}, name="managed_probe", namespace="/status_other")
    launch_node(MODULE, name="managed_probe").wait_ready(probe=ros)
    names = lambda msgs: {s.name for m in msgs for s in m.status}  # noqa: E731
    health.wait_for(lambda msgs: {"status_other/managed_probe: state", "fay/managed_probe: state"} <= names(msgs))

    done = _status("--nodes", "managed_probe", "--wait", "30")
    assert done.returncode == 0 and "managed_probe  OK" in done.stdout and "no input device" not in done.stdout

    def other_with_reason():  # again until discovery has brought the other's /diagnostics in within the wait
        other = _status("--namespace", "/status_other", "--nodes", "managed_probe", "--wait", "3")
        return other if "no input device" in other.stdout else None

    other = wait_until(other_with_reason, 60, interval=0.0, message="the other companion's reason in `fay-ros status`")
    assert other.returncode == 1 and "managed_probe  OK" not in other.stdout, other.stdout
