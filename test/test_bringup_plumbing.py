"""`fay-ros up` (what `make run` starts) runs real nodes that exchange fay_msgs, restarts a
crashed node, and stops cleanly on Ctrl-C; a bad parameter stops a node with the reason."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import psutil_free_children as children  # noqa: F401  (local helper module below)
from fay_msgs.msg import Utterance
from harness import NodeProcess, ros_environment, wait_until

# The plumbing of `fay-ros up` with two light nodes (the full companion has its own tests).
PLUMBING = [
    "demo:=true",
    "nodes:=timeline,demo_talker",
    "use_web:=false",
    "use_rosbridge:=false",
    "use_llm_server:=false",
]


def test_up_runs_nodes_that_exchange_messages_and_stops_on_ctrl_c(ros):
    replies = ros.collect(Utterance, "reply")
    up = NodeProcess("fay_ros.cli", args=["up", *PLUMBING], ros=False)
    try:
        ros.wait_ready("timeline", timeout=30)
        ros.wait_ready("demo_talker", timeout=30)
        got = replies.wait_for_match(lambda m: m.conversation_id == "demo-0" and m.is_end, timeout=30)
        assert got.text
        pids = children.of(up.pid)
        assert len(pids) >= 2
        # The next reply starts a period (4 s) later: by then the timeline, subscribed like us,
        # has printed all of demo-0.
        replies.wait_for_match(lambda m: m.conversation_id == "demo-1", timeout=30)
    finally:
        os.killpg(up.pid, signal.SIGINT)
    assert up.wait_exit(20) == 0
    # demo_talker published, timeline (another process) received and printed it.
    assert "reply      demo-0#0" in up.output()
    assert "stopped" in up.output()
    wait_until(lambda: not any(children.alive(p) for p in pids), 10, message="node processes to exit")


def test_up_restarts_a_crashed_node(ros):
    up = NodeProcess("fay_ros.cli", args=["up", *PLUMBING], ros=False)
    try:
        ready = ros.wait_ready("timeline", timeout=30)
        pid = children.running(up.pid, "fay_ros.nodes.timeline")
        assert pid is not None and f"started timeline (pid {pid})" in up.output()
        os.kill(pid, signal.SIGKILL)
        ready.wait_for(lambda msgs: sum(m.data for m in msgs) >= 2, 30, what="the restarted timeline ready")
        assert "timeline exited with -9; restarting" in up.output()
        new_pid = children.running(up.pid, "fay_ros.nodes.timeline")
        assert new_pid not in (None, pid) and f"started timeline (pid {new_pid})" in up.output()
    finally:
        up.stop()


def test_bad_parameter_stops_node_at_startup_with_reason():
    node = NodeProcess("fay_ros.nodes.demo_talker", {"period": -1.0})
    code = node.wait_exit(30)
    assert code == 2
    out = node.output()
    assert "parameter 'period'" in out and "greater than 0" in out


def test_node_defaults_to_fay_namespace():
    env = ros_environment()
    code = (
        "import rclpy; from fay_ros.nodes.demo_talker import DemoTalker; rclpy.init(); n = DemoTalker(); "
        "print(n.publisher.topic_name); n.destroy_node(); rclpy.shutdown()"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=True)
    assert out.stdout.strip() == "/fay/reply"


def test_timeline_publishes_typed_lines_on_text_input(ros):
    from fay_msgs.msg import Transcript

    typed = ros.collect(Transcript, "text_input")
    env = ros_environment()
    proc = subprocess.Popen(
        [sys.executable, "-m", "fay_ros.nodes.timeline", "--ros-args", "-r", "__ns:=/fay", "-p", "typed_input:=true"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        text=True,
    )
    try:
        ros.wait_ready("timeline")
        assert "ready" in proc.stdout.readline()  # its prompt, printed before it said so on ~/ready
        ros.wait_for_publishers("text_input")
        # Discovery is two-sided: until the node's publisher has matched our subscription a
        # volatile message is lost, so type the line again until one arrives.
        msg = None
        for _attempt in range(20):
            proc.stdin.write("你好 Fay\n")
            proc.stdin.flush()
            try:
                msg = typed.wait_for_match(lambda m: m.text == "你好 Fay", timeout=1.0)
                break
            except TimeoutError:
                continue
        assert msg is not None, "typed line never arrived on text_input"
        assert msg.user_id == "user" and msg.is_final
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(10)
