"""The websocket endpoint that `fay-ros web` starts (the web door in front of
rosbridge-server-rs in the pip setup), exercised by real clients over real websockets
against a real DDS graph:

- roslibpy (an external rosbridge client from PyPI, with its token in an Authorization
  header) subscribes /fay/action_cue and publishes on /fay/text_input, both custom fay_msgs
  types;
- a raw rosbridge v2 client proves the face role is enforced: everything outside it is
  refused, and a real memory service behind it is never called.
"""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

from fay_msgs.msg import ActionCue, Transcript
from fay_msgs.srv import Recall
from fay_ros.common import qos, topics
from harness import free_port, publish_until, start_web, wait_until, write_web_access


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory):
    """`fay-ros web --no-page` on a free port (9090 may be taken by a parallel test run):
    (port, token of a face client for 'user')."""
    port = free_port()
    access = tmp_path_factory.mktemp("access") / "web_access.yaml"
    token = write_web_access(access, {"user": "face"})["user"]
    proc = start_web("--no-page", "--bridge", "rs", "--bridge-port", str(port), "--access-file", str(access))
    try:
        yield port, token
    finally:
        code = proc.stop()
        print(proc.output()[-3000:])
        assert code == 0, f"fay-ros web did not stop cleanly (exit {code})"


def test_roslibpy_subscribes_action_cue_and_publishes_text_input(endpoint, ros):
    import roslibpy

    port, token = endpoint
    client = roslibpy.Ros(host="127.0.0.1", port=port, headers={"Authorization": f"Bearer {token}"})
    client.run(timeout=20)
    try:
        received: list[dict] = []
        got_cue = threading.Event()
        cue_topic = roslibpy.Topic(client, "/fay/action_cue", "fay_msgs/msg/ActionCue")
        cue_topic.subscribe(lambda m: (received.append(m), got_cue.set()))

        publisher = ros.publisher(ActionCue, topics.ACTION_CUE, qos.EVENTS)
        ros.wait_for_subscribers(publisher)  # the bridge's subscription, made for roslibpy
        # both ends are new: until the bridge has matched our writer a volatile cue can be lost
        publish_until(
            publisher,
            ActionCue(
                code="guidance.invite",
                behavior="invite",
                affect="warm",
                intensity=0.74,
                priority=82,
                sentiment=0.5,
                text="这边请",
                utterance_id="c1:0",
                matched_keywords=["这边请"],
            ),
            got_cue.is_set,
            20,
            message="an ActionCue through the bridge to roslibpy",
        )
        cue = received[0]
        assert (cue["behavior"], cue["affect"], cue["priority"], cue["utterance_id"]) == ("invite", "warm", 82, "c1:0")
        assert abs(cue["intensity"] - 0.74) < 1e-6
        # A face client gets the cue, not the sentence it came from (which may be someone else's).
        assert (cue["text"], cue["matched_keywords"]) == ("", [])

        typed = ros.collect(Transcript, topics.TEXT_INPUT, qos.EVENTS)
        text_topic = roslibpy.Topic(client, "/fay/text_input", "fay_msgs/msg/Transcript")
        text_topic.advertise()
        ros.wait_for_publishers(topics.TEXT_INPUT)
        # It claims to be someone else; the token decides.
        message = roslibpy.Message({"user_id": "owner", "text": "你好，Fay", "is_final": True, "language": "zh"})

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


async def _exchange(endpoint: tuple[int, str], requests: list[dict], expect: int, timeout: float = 15.0) -> list[dict]:
    import websockets

    port, token = endpoint
    replies: list[dict] = []
    async with websockets.connect(f"ws://127.0.0.1:{port}/?token={token}") as ws:
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
        {
            "op": "call_service",
            "id": "recall",
            "service": "/fay/memory/recall",
            "type": "fay_msgs/srv/Recall",
            "args": {"owner": "user", "query": "secrets"},
        },
        {
            "op": "call_service",
            "id": "recall-relative",
            "service": "fay/memory/recall",
            "args": {"owner": "user", "query": "secrets"},
        },
        {"op": "subscribe", "id": "speech", "topic": "/fay/speech/final", "type": "fay_msgs/msg/Transcript"},
        {"op": "advertise", "id": "spoof-cue", "topic": "/fay/action_cue", "type": "fay_msgs/msg/ActionCue"},
        {"op": "advertise", "id": "spoof-reply", "topic": "fay/reply", "type": "fay_msgs/msg/Utterance"},
        {
            "op": "advertise_service",
            "id": "fake-memory",
            "service": "/fay/memory/remember",
            "type": "fay_msgs/srv/Remember",
        },
        {
            "op": "call_service",
            "id": "params",
            "service": "/fay/web_bridge/get_parameters",
            "args": {"names": ["port"]},
        },
        {"op": "subscribe", "id": "cbor", "topic": "/fay/cbor_trick", "compression": "cbor"},
        {"op": "fragment", "id": "fragment", "data": "{", "num": 0, "total": 2},
        {"op": "auth", "id": "auth", "mac": "x"},
    ]
    replies = asyncio.run(_exchange(endpoint, denied, expect=len(denied)))
    by_id = {r.get("id"): r for r in replies}
    assert set(by_id) == {r["id"] for r in denied}, replies
    for request in denied:
        reply = by_id[request["id"]]
        text = json.dumps(reply, ensure_ascii=False)
        target = request.get("topic") or request.get("service")
        assert reply.get("op") == "status" and "refused" in text, f"{request['op']} {target}: {reply}"
        assert reply.get("result") in (None, False)
    assert calls == [], "the memory service was called through the bridge"
    assert "a memory the browser must never see" not in json.dumps(replies, ensure_ascii=False)

    # The allowed operations of the same client still work (no blanket refusal).
    allowed = [
        {"op": "subscribe", "id": "cue", "topic": "/fay/action_cue", "type": "fay_msgs/msg/ActionCue"},
        {"op": "advertise", "id": "chat", "topic": "/fay/text_input", "type": "fay_msgs/msg/Transcript"},
        {"op": "subscribe", "id": "bad", "topic": "/fay/memory_dump", "type": "std_msgs/msg/String"},
    ]
    replies = asyncio.run(_exchange(endpoint, allowed, expect=1))
    assert [r.get("id") for r in replies] == ["bad"], replies  # only the last one is refused
