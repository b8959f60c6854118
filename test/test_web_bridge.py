"""The rosbridge endpoint that `fay-ros web` starts (rosbridge-server-rs in the pip setup),
exercised by real clients over real websockets against a real DDS graph:

- roslibpy (an external rosbridge client from PyPI) subscribes /fay/action_cue and publishes
  on /fay/text_input, both custom fay_msgs types;
- a raw rosbridge v2 client proves the allow-list is enforced by the server: everything
  outside it is refused, and a real memory service behind it is never called.
"""
from __future__ import annotations

import asyncio
import json
import socket
import threading

import pytest

from fay_msgs.msg import ActionCue, Transcript
from fay_msgs.srv import Recall
from harness import NodeProcess, wait_until

from fay_ros.common import qos, topics


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def endpoint():
    """`fay-ros web --no-page` on a free port (9090 may be taken by a parallel test run)."""
    port = free_port()
    proc = NodeProcess("fay_ros.cli", args=["web", "--no-page", "--bridge", "rs", "--bridge-port", str(port)],
                       ros=False)
    try:
        proc.wait_output("[fay-ros web] ready", timeout=30)
        yield port
    finally:
        code = proc.stop()
        print(proc.output()[-3000:])
        assert code == 0, f"fay-ros web did not stop cleanly (exit {code})"


def test_roslibpy_subscribes_action_cue_and_publishes_text_input(endpoint, ros):
    import roslibpy

    client = roslibpy.Ros(host="127.0.0.1", port=endpoint)
    client.run(timeout=20)
    try:
        received: list[dict] = []
        got_cue = threading.Event()
        cue_topic = roslibpy.Topic(client, "/fay/action_cue", "fay_msgs/msg/ActionCue")
        cue_topic.subscribe(lambda m: (received.append(m), got_cue.set()))

        publisher = ros.publisher(ActionCue, topics.ACTION_CUE, qos.EVENTS)
        ros.wait_for_subscribers(publisher)  # the bridge's subscription, made for roslibpy
        publisher.publish(ActionCue(code="guidance.invite", behavior="invite", affect="warm", intensity=0.74,
                                    priority=82, sentiment=0.5, text="这边请", utterance_id="c1:0",
                                    matched_keywords=["这边请"]))
        assert got_cue.wait(20), "roslibpy got no ActionCue through the bridge"
        cue = received[0]
        assert (cue["behavior"], cue["affect"], cue["priority"], cue["text"]) == ("invite", "warm", 82, "这边请")
        assert cue["matched_keywords"] == ["这边请"] and abs(cue["intensity"] - 0.74) < 1e-6

        typed = ros.collect(Transcript, topics.TEXT_INPUT, qos.EVENTS)
        text_topic = roslibpy.Topic(client, "/fay/text_input", "fay_msgs/msg/Transcript")
        text_topic.advertise()
        ros.wait_for_publishers(topics.TEXT_INPUT)
        message = roslibpy.Message({"user_id": "user", "text": "你好，Fay", "is_final": True, "language": "zh"})

        # Discovery is asymmetric: until the bridge's writer has matched our reader a volatile
        # message can be lost, so publish again on each poll until one arrives.
        def delivered():
            if not typed.messages:
                text_topic.publish(message)
            return typed.messages

        wait_until(delivered, timeout=20, interval=0.3, message="a Transcript from roslibpy on /fay/text_input")
        msg = typed.messages[0]
        assert (msg.text, msg.user_id, msg.is_final, msg.language) == ("你好，Fay", "user", True, "zh")
        text_topic.unadvertise()
        cue_topic.unsubscribe()
    finally:
        client.terminate()


async def _exchange(port: int, requests: list[dict], expect: int, timeout: float = 15.0) -> list[dict]:
    import websockets

    replies: list[dict] = []
    async with websockets.connect(f"ws://127.0.0.1:{port}") as ws:
        for request in requests:
            await ws.send(json.dumps(request))
        async with asyncio.timeout(timeout):
            while len(replies) < expect:
                replies.append(json.loads(await ws.recv()))
    return replies


def test_allowlist_is_enforced_by_the_endpoint(endpoint, ros):
    calls: list[Recall.Request] = []

    def recall(request, response):
        calls.append(request)
        response.success = True
        response.message = "a memory the browser must never see"
        return response

    ros.node.create_service(Recall, topics.SRV_RECALL, recall)
    denied = [
        {"op": "call_service", "id": "recall", "service": "/fay/memory/recall", "type": "fay_msgs/srv/Recall",
         "args": {"owner": "user", "query": "secrets"}},
        {"op": "call_service", "id": "recall-relative", "service": "fay/memory/recall",
         "args": {"owner": "user", "query": "secrets"}},
        {"op": "subscribe", "id": "speech", "topic": "/fay/speech/final", "type": "fay_msgs/msg/Transcript"},
        {"op": "advertise", "id": "spoof-cue", "topic": "/fay/action_cue", "type": "fay_msgs/msg/ActionCue"},
        {"op": "advertise", "id": "spoof-reply", "topic": "fay/reply", "type": "fay_msgs/msg/Utterance"},
        {"op": "advertise_service", "id": "fake-memory", "service": "/fay/memory/remember",
         "type": "fay_msgs/srv/Remember"},
        {"op": "call_service", "id": "params", "service": "/fay/web_bridge/get_parameters",
         "args": {"names": ["port"]}},
    ]
    replies = asyncio.run(_exchange(endpoint, denied, expect=len(denied)))
    by_id = {r.get("id"): r for r in replies}
    assert set(by_id) == {r["id"] for r in denied}, replies
    for request in denied:
        reply = by_id[request["id"]]
        text = json.dumps(reply, ensure_ascii=False)
        assert "denies" in text, f"{request['op']} {request.get('topic') or request.get('service')}: {reply}"
        assert reply.get("result") in (None, False)
    assert calls == [], "the memory service was called through the bridge"
    assert "a memory the browser must never see" not in json.dumps(replies, ensure_ascii=False)

    # The allowed operations of the same client still work (no blanket refusal).
    allowed = [{"op": "subscribe", "id": "cue", "topic": "/fay/action_cue", "type": "fay_msgs/msg/ActionCue"},
               {"op": "advertise", "id": "chat", "topic": "/fay/text_input", "type": "fay_msgs/msg/Transcript"},
               {"op": "subscribe", "id": "bad", "topic": "/fay/memory_dump", "type": "std_msgs/msg/String"}]
    replies = asyncio.run(_exchange(endpoint, allowed, expect=1))
    assert [r.get("id") for r in replies] == ["bad"], replies  # only the last one is refused
