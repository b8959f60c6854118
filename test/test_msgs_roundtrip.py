"""Every fay_msgs message and service crosses real DDS between two processes intact."""

from __future__ import annotations

import random

import pytest

from harness import NodeProcess, wait_until
from msgfill import fill, import_type, seed_of

MESSAGES = [
    "AudioChunk",
    "WordTiming",
    "Transcript",
    "Utterance",
    "ActionCue",
    "Viseme",
    "VisemeTrack",
    "SpeechState",
    "MemoryNode",
]
SERVICES = ["Remember", "Recall", "Forget", "GetActiveRules", "GetProfile"]


@pytest.fixture(scope="module")
def msg_echoes():
    procs = {
        name: NodeProcess("procs.echo", args=["msg", f"fay_msgs/msg/{name}"], name=f"echo_{name}") for name in MESSAGES
    }
    yield procs
    for p in procs.values():
        p.stop()


@pytest.mark.parametrize("name", MESSAGES)
def test_message_round_trip(name, msg_echoes, ros):
    cls = import_type(f"fay_msgs/msg/{name}")
    echo = msg_echoes[name]
    echo.wait_ready()
    out = ros.collect(cls, "echo_out")
    pub = ros.publisher(cls, "echo_in")
    ros.wait_for_subscribers(pub)
    # every echo publishes an echo_out of its own type: only this type's one matches
    wait_until(lambda: out.subscription.get_publisher_count() >= 1, message=f"the {name} echo on echo_out")
    # A writer can see the echo's reader matched before that reader has matched the writer, and
    # a volatile sample sent in between is dropped: a warm-up message, sent again until its echo
    # comes back, shows the whole path is matched before the three are sent.
    warm_up = fill(cls(), random.Random(99))
    wait_until(lambda: bool(pub.publish(warm_up)) or bool(out.messages), 20, message=f"the {name} echo's first reply")
    out.wait_for(lambda msgs: len(msgs) >= 1, what="the warm-up echo")
    out.clear()
    sent = [fill(cls(), random.Random(i)) for i in range(3)]
    for msg in sent:
        pub.publish(msg)
    out.wait_for(lambda msgs: sum(m in sent for m in msgs) >= 3, what="the three echoes")
    got = [m for m in list(out.messages) if m != warm_up]  # (a late warm-up echo may come first)
    assert got[:3] == sent
    # The fill really exercised nested arrays and non-default values.
    assert sent[0] != cls()


@pytest.mark.parametrize("name", SERVICES)
def test_service_round_trip(name, ros):
    cls = import_type(f"fay_msgs/srv/{name}")
    server = NodeProcess("procs.echo", args=["srv", f"fay_msgs/srv/{name}"], name=f"echo_{name}")
    try:
        server.wait_ready()
        request = fill(cls.Request(), 42)
        response = ros.call(cls, "echo_srv", request)
        assert response == fill(cls.Response(), seed_of(request))
        assert response != cls.Response()
    finally:
        server.stop()


def test_nested_arrays_and_constants_survive():
    from fay_msgs.msg import ActionCue, Viseme, VisemeTrack

    track = fill(VisemeTrack(), 1)
    assert len(track.frames) >= 2 and all(isinstance(f, Viseme) for f in track.frames)
    assert Viseme.OU == 14 and Viseme.SIL == 0
    assert ActionCue.SENTIMENT_SCALE == "lexicon_v1:-1..1"
