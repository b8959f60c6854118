"""`fay-ros chat` and the dialogue node speak the same model output the same: a verdict in the
judge's format, given to both at their defaults, is spoken as its message by both.

Both are real processes against the loopback scripted LLM, and neither names a model: the
node then takes the embedded model's name (the tiny flow, one plain call), the CLI none (the
judged flow). The tiny flow's stream used to skip the judge's reader, so its outbound gate
removed the verdict as tool-call JSON and the node said its no_answer line; every model
stream now passes the same reader.
"""

from __future__ import annotations

import subprocess
import sys

import dialogue_fake_llm as fake
from fay_msgs.msg import Transcript
from harness import REPO, dialogue_node, ros_environment

ANSWER = "Hiking is lovely. I like it too."
# (not a name: the tiny flow greets a name itself, without the model)
SAID = "I like hiking, do you?"


def _node_says(ros, llm) -> list[str]:
    with dialogue_node(ros, {"base_url": llm.base_url, "memory": False, "qa_file": "none"}) as (
        _node,
        replies,
        text_input,
    ):
        text_input.publish(Transcript(text=SAID, user_id="user", language="en", is_final=True))
        reply = replies.wait_for(
            lambda msgs: list(msgs) if any(m.is_end for m in msgs) else None, what="the end of the reply"
        )
        return [m.text for m in reply if m.text]


def _cli_says(llm) -> list[str]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "fay_ros.cli",
            "chat",
            SAID,
            "--base-url",
            llm.base_url,
            "--qa",
            "none",
            "--language",
            "en",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(REPO),
        env=ros_environment(),
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_judge_verdict_is_spoken_the_same_by_the_cli_and_the_node(ros, llm):
    llm.reset()
    llm.script(fake.judge_finish(ANSWER))
    cli_lines = _cli_says(llm)
    # the node may prime the model server first (tiny flow: warm_up); whichever request comes
    # first, each gets the same answer
    llm.script(fake.judge_finish(ANSWER), fake.judge_finish(ANSWER))
    node_lines = _node_says(ros, llm)
    assert node_lines == cli_lines == ["Hiking is lovely.", "I like it too."]
