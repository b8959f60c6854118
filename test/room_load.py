"""Many people typing at once through the real graph (issue 39): the memory and dialogue nodes
as processes, the scripted loopback LLM answering each line with the tags it was asked about,
a probe publishing `text_input` lines and timing `reply`. Shared by the correctness test
(test_room_load.py, a small load, no timing asserted) and the bench (bench_room_load.py).

A line is "u07-3: ..." (user u07, their line 3); the model's answer names every tag of the
user message it was given ("Noted u07-3."), so an answer that reached the wrong person, or a
line nobody answered, shows in what comes back on `reply`.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dialogue_fake_llm as fake
from harness import DEFAULT_TIMEOUT, NodeProcess, RosProbe, publish_until, wait_until

TAG = re.compile(r"\b(u\d{2}-\d+)\b")


def user_of(tag: str) -> str:
    return tag.split("-")[0]


def line_text(tag: str) -> str:
    return f"{tag}: tell me something nice"


def noted(body: dict[str, Any]) -> fake.Scripted:
    """The loopback model: 'Noted <tags>.' for the tags of the last user message."""
    said = body["messages"][-1]["content"]
    tags = list(dict.fromkeys(TAG.findall(said if isinstance(said, str) else str(said))))
    return fake.text("Noted ", " ".join(tags) + ".")


@dataclass
class Outcome:
    sent: dict[str, float] = field(default_factory=dict)  # tag -> when it was published
    answered: dict[str, float] = field(default_factory=dict)  # tag -> first reply piece naming it
    misrouted: list[tuple[str, str]] = field(default_factory=list)  # (tag, the user it reached)

    def latencies(self) -> list[float]:
        return [self.answered[t] - self.sent[t] for t in self.sent if t in self.answered]

    def unanswered(self) -> list[str]:
        return [t for t in self.sent if t not in self.answered]


class RoomLoad:
    """The graph and the probe; `line(tag)` publishes one line, `outcome` collects the answers."""

    def __init__(self, probe: RosProbe, llm: fake.ScriptedLlm, tmp: Path, **dialogue: Any) -> None:
        from fay_msgs.msg import Transcript, Utterance
        from fay_ros.common import qos, topics

        self.probe, self.llm = probe, llm
        self.Transcript = Transcript
        llm.responder = noted
        self.procs = [
            NodeProcess("fay_ros.nodes.memory", {"db_path": str(tmp / "memory.db"), "embedder": "hashed"}),
            NodeProcess(
                "fay_ros.nodes.dialogue",
                {
                    "base_url": llm.base_url,
                    "model": "scripted-model",
                    "model_profile": "tiny",
                    "voice_examples_file": "none",
                    **dialogue,
                },
            ),
        ]
        self.outcome = Outcome()
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self.pub = probe.publisher(Transcript, topics.TEXT_INPUT)
        self.replies = probe.node.create_subscription(Utterance, topics.REPLY, self._on_reply, qos.EVENTS)

    def start(self) -> RoomLoad:
        for proc in self.procs:
            proc.wait_ready(timeout=60, probe=self.probe)
        self.probe.wait_for_subscribers(self.pub, count=2)  # the dialogue and the memory node
        # the first message into the dialogue: resent until answered (an idempotent warm-up line)
        publish_until(
            self.pub,
            self.Transcript(text=line_text("u99-0"), user_id="u99", is_final=True),
            lambda: "u99-0" in self.outcome.answered,
        )
        self.outcome = Outcome()
        return self

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.stop()

    def _on_reply(self, msg: Any) -> None:
        now = time.monotonic()
        with self._changed:
            for tag in TAG.findall(msg.text):
                if user_of(tag) != msg.user_id:
                    self.outcome.misrouted.append((tag, msg.user_id))
                self.outcome.answered.setdefault(tag, now)
            self._changed.notify_all()

    def line(self, tag: str) -> None:
        with self._lock:
            self.outcome.sent[tag] = time.monotonic()
        self.pub.publish(self.Transcript(text=line_text(tag), user_id=user_of(tag), is_final=True, language="en"))

    def wait_answered(self, tags: list[str], timeout: float = DEFAULT_TIMEOUT) -> None:
        wait_until(
            lambda: all(t in self.outcome.answered for t in tags),
            timeout,
            interval=0.05,
            message=lambda: f"answers to {[t for t in tags if t not in self.outcome.answered]}",
        )


@contextmanager
def room(probe: RosProbe, llm: fake.ScriptedLlm, tmp: Path, **dialogue: Any) -> Iterator[RoomLoad]:
    rig = RoomLoad(probe, llm, tmp, **dialogue)
    try:
        yield rig.start()
    finally:
        rig.stop()


@contextmanager
def openai_endpoint(tmp: Path, users: list[str]) -> Iterator[tuple[str, dict[str, str]]]:
    """`fay-ros openai` as a process over the running graph, one token per user: (root URL,
    {user: token}), once /health sees the dialogue and the memory."""
    import httpx2 as httpx

    from harness import free_port, http_ok, write_web_access

    tokens = write_web_access(tmp / "access.yaml", {user: "face" for user in users})
    port = free_port()
    root = f"http://127.0.0.1:{port}"
    server = NodeProcess(
        "fay_ros.cli",
        args=["openai", "--port", str(port), "--access-file", str(tmp / "access.yaml")],
        ros=False,
        ready=lambda: http_ok(f"{root}/health"),
    )

    def ready() -> bool:
        with httpx.Client(trust_env=False, timeout=10) as client:
            report = client.get(f"{root}/health").json()
        return bool(report["dialogue"]["chat_action"] and report["memory"]["reachable"])

    try:
        server.wait_ready(timeout=60)
        wait_until(ready, timeout=60, message="the dialogue and memory in /health")
        yield root, tokens
    finally:
        server.stop()


def openai_client(root: str, token: str) -> Any:
    """The official `openai` client of one user (its token) on the endpoint."""
    from test_openai_endpoint import client_for

    return client_for(root, token)


def stream_tag(client: Any, tag: str) -> tuple[float, str]:
    """One streamed chat completion asking line `tag`: (seconds to the first content delta,
    the whole answer)."""
    started = time.monotonic()
    first = 0.0
    pieces = []
    chunks = client.chat.completions.create(
        model="fay", messages=[{"role": "user", "content": line_text(tag)}], stream=True
    )
    for chunk in chunks:
        if chunk.choices and chunk.choices[0].delta.content:
            first = first or time.monotonic() - started
            pieces.append(chunk.choices[0].delta.content)
    return first, "".join(pieces)
