"""`fay-ros type`: typed lines reach text_input from any terminal; a launch never reads stdin."""

from __future__ import annotations

import subprocess
import sys

from fay_ros.bringup import graph
from harness import ros_environment


def _type(*args: str, stdin: str = "", timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "type", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=ros_environment(),
        timeout=timeout,
    )


def test_a_line_given_as_argument_is_published_once_as_the_users_words(ros):
    from fay_msgs.msg import Transcript

    typed = ros.collect(Transcript, "text_input")
    done = _type("--user", "anna", "--language", "zh", "你好", "Fay")
    assert done.returncode == 0, done.stderr
    msg = typed.wait_for_match(lambda m: m.text == "你好 Fay")
    assert msg.user_id == "anna" and msg.language == "zh" and msg.is_final and msg.header.frame_id == "keyboard"


def test_lines_from_stdin_are_published_in_order_and_blank_lines_skipped(ros):
    from fay_msgs.msg import Transcript

    typed = ros.collect(Transcript, "text_input")
    done = _type(stdin="first line\n\n   \nsecond line\n")
    assert done.returncode == 0, done.stderr
    msgs = typed.wait_for_count(2)
    assert [m.text for m in msgs] == ["first line", "second line"]
    assert all(m.user_id == "user" for m in msgs)


def test_without_a_listener_it_says_so_and_fails():
    done = _type("--namespace", "/nobody_here", "--wait", "0.5", "hello")
    assert done.returncode == 1
    assert "nobody subscribes to /nobody_here/text_input" in done.stderr


def test_a_launch_never_offers_typed_input_but_fay_ros_up_does():
    launched = {n.name: n for n in graph.companion_nodes()}
    assert launched["timeline"].parameters.get("typed_input") is False and not launched["timeline"].interactive
    up = {n.name: n for n in graph.companion_nodes(terminal=True)}
    assert up["timeline"].parameters.get("typed_input") is True and up["timeline"].interactive
