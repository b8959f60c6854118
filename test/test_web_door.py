"""The web door: tokens, origins, bound identities and roles.

Pure checks of the access file (fay_ros.web.access) and the per-client protocol policy
(fay_ros.web.gate_policy), then the real thing: `fay-ros web` with rosbridge-server-rs
behind its gate, raw websocket clients, and rclpy on the same DDS graph.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from fay_msgs.msg import ActionCue, Transcript, Utterance
from fay_ros.common import qos, topics
from fay_ros.web.access import AccessError, add_client, load, load_or_create
from fay_ros.web.allowlist import AllowList
from fay_ros.web.gate import loopback_origins
from fay_ros.web.gate_policy import MAX_CLIENT_FRAME, ClientSession, Refused, RolePermissions
from harness import NodeProcess, free_port, start_web, write_web_access

TOKEN_A = "a" * 43
TOKEN_B = "b" * 43


# -- the access file ---------------------------------------------------------------------------


def test_first_start_creates_a_private_access_file_once(tmp_path):
    path = tmp_path / "cfg" / "fay_ros" / "web_access.yaml"
    access, created = load_or_create(path, "user")
    assert created is not None and created.user_id == "user" and created.role == "face"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert access.lookup(created.token) == created
    assert len(created.token) >= 40 and created.token not in repr(created)
    again, created_again = load_or_create(path, "user")
    assert created_again is None, "a second start must not make (or print) a new token"
    assert [c.token for c in again.clients] == [created.token]


def test_access_file_lookup_is_exact(tmp_path):
    path = tmp_path / "a.yaml"
    write_web_access_tokens(path, [(TOKEN_A, "alice", "face"), (TOKEN_B, "", "face")])
    access = load(path)
    assert access.lookup(TOKEN_A).user_id == "alice"
    assert access.lookup(TOKEN_B).is_guest
    for wrong in ("", None, TOKEN_A[:-1], TOKEN_A + "a", TOKEN_A.upper()):
        assert access.lookup(wrong) is None, wrong


def write_web_access_tokens(path, clients, mode=0o600, extra=""):
    body = "clients:\n" + "".join(f"  - token: {t}\n    user_id: '{u}'\n    role: {r}\n" for t, u, r in clients)
    path.write_text(body + extra, encoding="utf-8")
    path.chmod(mode)


@pytest.mark.parametrize(
    "clients, extra, mode, expected",
    [
        ([(TOKEN_A, "alice", "face")], "", 0o644, "chmod 600"),
        ([(TOKEN_A, "alice", "face")], "", 0o640, "readable by other users"),
        ([(TOKEN_A, "alice", "owner")], "", 0o600, "clients.0.role"),
        ([(TOKEN_A, "al ice", "face")], "", 0o600, "clients.0.user_id"),
        ([("short", "alice", "face")], "", 0o600, "clients.0.token"),
        ([(TOKEN_A + "!&", "alice", "face")], "", 0o600, "clients.0.token"),
        ([(TOKEN_A, "alice", "face"), (TOKEN_A, "bob", "face")], "", 0o600, "the same token is listed twice"),
        ([(TOKEN_A, "alice", "face")], "origins: [http://example.com/page]\n", 0o600, "origins"),
        ([(TOKEN_A, "alice", "face")], "colour: blue\n", 0o600, "colour"),
        ([(TOKEN_A, "alice", "face")], "origins: [unclosed\n", 0o600, "line"),
    ],
)
def test_a_bad_access_file_is_refused_naming_file_and_entry(tmp_path, clients, extra, mode, expected):
    path = tmp_path / "web_access.yaml"
    write_web_access_tokens(path, clients, mode, extra)
    with pytest.raises(AccessError) as error:
        load(path)
    assert str(path) in str(error.value) and expected in str(error.value)
    assert TOKEN_A not in str(error.value), "a token in an error message"


def test_add_client_keeps_the_file_private_and_the_others(tmp_path):
    path = tmp_path / "web_access.yaml"
    _access, first = load_or_create(path, "user")
    bob = add_client(path, "bob", label="bob's phone")
    guest = add_client(path, "")
    access = load(path)
    assert [(c.user_id, c.token) for c in access.clients] == [
        ("user", first.token),
        ("bob", bob.token),
        ("", guest.token),
    ]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len({first.token, bob.token, guest.token}) == 3


def test_face_origins_are_the_pages_own():
    assert loopback_origins("127.0.0.1", 8080) >= {
        "http://127.0.0.1:8080",
        "http://localhost:8080",
        "http://[::1]:8080",
    }
    assert "http://127.0.0.1:8081" not in loopback_origins("127.0.0.1", 8080)
    assert loopback_origins("192.168.1.5", 80) == {"http://192.168.1.5:80", "https://192.168.1.5:80"}


# -- the per-client policy -----------------------------------------------------------------------


def session(user_id="alice", role="face", services=()):
    from fay_ros.web.access import Client

    allow = AllowList.build("/fay", extra_services=services)
    client = Client(token=TOKEN_A, user_id=user_id, role=role)
    return ClientSession(client, RolePermissions.for_role(role, allow), "/fay")


def forwarded(s, message):
    return json.loads(s.from_client(json.dumps(message)))


@pytest.mark.parametrize(
    "message, reason",
    [
        ({"op": "call_service", "id": "1", "service": "/fay/memory/recall", "args": {"owner": "alice"}}, "service"),
        ({"op": "call_service", "service": "memory/forget"}, "service"),
        ({"op": "subscribe", "topic": "/fay/speech/final"}, "subscribed"),
        ({"op": "subscribe", "topic": "/fay/memory_dump"}, "subscribed"),
        ({"op": "advertise", "topic": "/fay/reply", "type": "fay_msgs/msg/Utterance"}, "published"),
        ({"op": "publish", "topic": "/fay/action_cue", "msg": {}}, "published"),
        ({"op": "advertise", "topic": "/fay/text_input", "type": "std_msgs/msg/String"}, "fay_msgs/msg/Transcript"),
        ({"op": "publish", "topic": "/fay/text_input", "msg": "hello"}, "JSON object"),
        ({"op": "advertise_service", "service": "/fay/memory/remember", "type": "x"}, "not allowed"),
        ({"op": "fragment", "id": "f", "data": "{", "num": 0, "total": 2}, "not allowed"),
        ({"op": "auth", "mac": "x"}, "not allowed"),
        ({"op": "send_action_goal", "action": "/fay/say"}, "not allowed"),
        ({"op": "subscribe", "topic": "/fay/../reply"}, "ROS name"),
        ({"op": "subscribe"}, "topic"),
        ({"topic": "/fay/reply"}, "rosbridge operation"),
        (["op", "subscribe"], "rosbridge operation"),
    ],
)
def test_the_face_role_is_refused_everything_else(message, reason):
    s = session()
    with pytest.raises(Refused) as refused:
        s.from_client(json.dumps(message))
    assert reason in str(refused.value)
    status = json.loads(ClientSession.refusal(str(refused.value), refused.value.message_id))
    assert status["op"] == "status" and status["level"] == "error"
    if isinstance(message, dict) and "id" in message:
        assert status["id"] == message["id"]


def test_frames_that_are_not_small_json_text_are_refused():
    s = session()
    for frame, reason in (
        (b'{"op": "subscribe"}', "binary"),
        ("{not json", "not JSON"),
        (json.dumps({"op": "publish", "topic": "/fay/text_input", "msg": {"text": "x" * MAX_CLIENT_FRAME}}), "exceeds"),
    ):
        with pytest.raises(Refused, match=reason):
            s.from_client(frame)
    assert s.refused == 3


def test_typed_text_speaks_as_the_bound_user_whatever_it_claims():
    for user_id in ("alice", ""):
        s = session(user_id)
        for claimed in ({"user_id": "user"}, {"user_id": "alice"}, {"user_id": ""}, {}):
            out = forwarded(s, {"op": "publish", "topic": "text_input", "msg": dict(claimed, text="hi", is_final=True)})
            assert out["topic"] == "/fay/text_input"
            assert out["msg"] == {"user_id": user_id, "text": "hi", "is_final": True}


def test_allowed_operations_pass_with_only_their_own_fields():
    s = session()
    out = forwarded(
        s,
        {
            "op": "subscribe",
            "id": "r",
            "topic": "/fay/reply",
            "type": "fay_msgs/msg/Utterance",
            "compression": "cbor",
            "fragment_size": 10,
            "qos": {"depth": 1},
        },
    )
    assert out == {
        "op": "subscribe",
        "id": "r",
        "topic": "/fay/reply",
        "type": "fay_msgs/msg/Utterance",
        "qos": {"depth": 1},
    }
    assert (
        forwarded(s, {"op": "advertise", "topic": "interrupt", "type": "std_msgs/msg/Empty"})["topic"]
        == "/fay/interrupt"
    )
    assert forwarded(s, {"op": "publish", "topic": "/fay/interrupt", "msg": {}})["msg"] == {}
    assert forwarded(s, {"op": "unsubscribe", "topic": "/fay/visemes"})["op"] == "unsubscribe"


def test_admin_role_may_call_the_opened_services_and_the_face_role_never():
    # The admin role's own services (the memory browser's) and what --allow-service opens;
    # nothing else (test_web_admin.py has the full list).
    admin = session("root", "admin", services=("memory/profile",))
    assert forwarded(admin, {"op": "call_service", "service": "memory/recall"})["service"] == "/fay/memory/recall"
    assert forwarded(admin, {"op": "call_service", "service": "memory/profile"})["service"] == "/fay/memory/profile"
    with pytest.raises(Refused):
        admin.from_client(json.dumps({"op": "call_service", "service": "memory/active_rules"}))
    face = session("alice", "face", services=("memory/recall",))
    with pytest.raises(Refused):
        face.from_client(json.dumps({"op": "call_service", "service": "memory/recall"}))


def publish_frame(topic, msg):
    return json.dumps({"op": "publish", "topic": topic, "msg": msg})


def test_another_users_reply_never_reaches_a_face_and_cues_lose_their_text():
    alice = session("alice")
    assert alice.to_client(publish_frame("/fay/reply", {"user_id": "alice", "text": "Hi Alice"})) is not None
    assert alice.to_client(publish_frame("/fay/reply", {"user_id": "", "text": "Hello guest"})) is not None
    assert alice.to_client(publish_frame("/fay/reply", {"user_id": "bob", "text": "Bob likes tea"})) is None
    guest = session("")
    assert guest.to_client(publish_frame("/fay/reply", {"user_id": "alice", "text": "Hi Alice"})) is None
    cue = json.loads(
        alice.to_client(
            publish_frame("/fay/action_cue", {"behavior": "wave", "text": "Bob likes tea", "matched_keywords": ["tea"]})
        )
    )
    assert cue["msg"] == {"behavior": "wave", "text": "", "matched_keywords": []}
    status = json.dumps({"op": "status", "level": "error", "msg": "x"})
    assert alice.to_client(status) == status
    assert alice.to_client(b"\x00cbor") is None
    assert alice.dropped == 2
    admin = session("root", "admin")
    assert admin.to_client(publish_frame("/fay/reply", {"user_id": "bob", "text": "t"})) is not None


# -- the real door: fay-ros web + rosbridge-server-rs + DDS ---------------------------------------


@pytest.fixture(scope="module")
def door(tmp_path_factory):
    access = tmp_path_factory.mktemp("door") / "web_access.yaml"
    tokens = write_web_access(access, {"alice": "face", "bob": "face", "": "face", "root": "admin"})
    port, page_port = free_port(), free_port()
    proc = start_web(
        "--no-page",
        "--bridge",
        "rs",
        "--bridge-port",
        str(port),
        "--port",
        str(page_port),
        "--access-file",
        str(access),
    )
    try:
        yield {"port": port, "page_port": page_port, "tokens": tokens, "proc": proc}
    finally:
        code = proc.stop()
        out = proc.output()
        for token in tokens.values():
            assert token not in out, "a token reached the log of fay-ros web"
        assert code == 0, out[-2000:]


def handshake_status(url: str, headers: dict | None = None) -> int:
    try:
        with connect(url, additional_headers=headers, open_timeout=5):
            return 101
    except InvalidStatus as exc:
        return exc.response.status_code


def test_no_token_a_wrong_token_or_a_foreign_origin_is_refused_before_any_message(door):
    port, good = door["port"], door["tokens"]["alice"]
    own_origin = {"Origin": f"http://127.0.0.1:{door['page_port']}"}
    assert handshake_status(f"ws://127.0.0.1:{port}/", own_origin) == 401
    assert handshake_status(f"ws://127.0.0.1:{port}/?token=", own_origin) == 401
    assert handshake_status(f"ws://127.0.0.1:{port}/?token={good[:-2]}", own_origin) == 401
    assert handshake_status(f"ws://127.0.0.1:{port}/", {"Authorization": "Bearer nope"}) == 401
    for origin in (
        "http://evil.example",
        f"http://127.0.0.1:{door['page_port'] + 1}",
        "null",
        f"https://127.0.0.1.evil.example:{door['page_port']}",
    ):
        assert handshake_status(f"ws://127.0.0.1:{port}/?token={good}", {"Origin": origin}) == 403, origin
    # admin is off unless --enable-admin
    assert handshake_status(f"ws://127.0.0.1:{port}/?token={door['tokens']['root']}", own_origin) == 403
    # the right token from the face's own origin (or from no page at all) opens
    assert handshake_status(f"ws://127.0.0.1:{port}/?token={good}", own_origin) == 101
    assert handshake_status(f"ws://127.0.0.1:{port}/", {"Authorization": f"Bearer {good}"}) == 101


async def _client(port: int, token: str, requests: list[dict]):
    import websockets

    ws = await websockets.connect(f"ws://127.0.0.1:{port}/?token={token}")
    for request in requests:
        await ws.send(json.dumps(request))
    return ws


def test_the_bound_identity_is_used_whatever_the_client_claims(door, ros):
    typed = ros.collect(Transcript, topics.TEXT_INPUT, qos.EVENTS)
    port = door["port"]
    advertise = {"op": "advertise", "topic": "/fay/text_input", "type": "fay_msgs/msg/Transcript"}

    async def scenario():
        alice = await _client(port, door["tokens"]["alice"], [advertise])
        guest = await _client(port, door["tokens"][""], [advertise])
        try:
            deadline = asyncio.get_running_loop().time() + 20
            # publish again on each poll until both arrive (a brand-new publisher may lose one)
            while len({m.text for m in typed.messages}) < 2:
                assert asyncio.get_running_loop().time() < deadline, typed.messages
                for ws, text in ((alice, "from alice"), (guest, "from a guest")):
                    if text not in {m.text for m in typed.messages}:
                        await ws.send(
                            json.dumps(
                                {
                                    "op": "publish",
                                    "topic": "/fay/text_input",
                                    "msg": {"user_id": "user", "text": text, "is_final": True},
                                }
                            )
                        )
                await asyncio.sleep(0.3)  # poll interval of the wait, not a synchronisation
        finally:
            await alice.close()
            await guest.close()

    asyncio.run(scenario())
    speakers = {m.text: m.user_id for m in typed.messages}
    assert speakers == {"from alice": "alice", "from a guest": ""}


def test_each_face_hears_only_its_own_conversations(door, ros):
    replies = ros.publisher(Utterance, topics.REPLY, qos.EVENTS)
    cues = ros.publisher(ActionCue, topics.ACTION_CUE, qos.EVENTS)
    port = door["port"]
    subscribe = [
        {"op": "subscribe", "topic": "/fay/reply", "type": "fay_msgs/msg/Utterance"},
        {"op": "subscribe", "topic": "/fay/action_cue", "type": "fay_msgs/msg/ActionCue"},
    ]

    async def scenario():
        alice = await _client(port, door["tokens"]["alice"], subscribe)
        bob = await _client(port, door["tokens"]["bob"], subscribe)
        heard: dict[str, list[dict]] = {"alice": [], "bob": []}

        async def read(name, ws):
            async for frame in ws:
                heard[name].append(json.loads(frame))

        readers = [asyncio.create_task(read("alice", alice)), asyncio.create_task(read("bob", bob))]

        def seen(name, predicate):
            return any(m.get("op") == "publish" and predicate(m) for m in heard[name])

        try:
            async with asyncio.timeout(30):
                # Both faces' subscriptions (reply and action_cue) are in place once both hear a
                # guest's "ping" on each (the bridge acknowledges no subscribe).
                while not all(
                    seen(n, lambda m: m["msg"].get("text") == "ping")
                    and seen(n, lambda m: m["msg"].get("code") == "ping")
                    for n in heard
                ):
                    replies.publish(Utterance(user_id="", conversation_id="guest-0-x", text="ping", is_end=True))
                    cues.publish(ActionCue(code="ping", behavior="idle", utterance_id="guest-0-x:0"))
                    await asyncio.sleep(0.2)  # poll interval
                for user, text in (
                    ("alice", "Alice, your tea is green."),
                    ("bob", "Bob, your coffee is black."),
                    ("", "Hello whoever is there."),
                ):
                    replies.publish(
                        Utterance(
                            user_id=user,
                            conversation_id=f"{user or 'guest'}-1-x",
                            text=text,
                            is_first=True,
                            is_end=True,
                            source="llm",
                        )
                    )
                cues.publish(
                    ActionCue(
                        code="x",
                        behavior="wave",
                        text="Bob, your coffee is black.",
                        matched_keywords=["coffee"],
                        utterance_id="bob-1-x:0",
                    )
                )
                # the cue and the replies are on two topics, with no order between them
                while not all(
                    seen(n, lambda m: m["msg"].get("behavior") == "wave")
                    and seen(n, lambda m: m["msg"].get("text") == "Hello whoever is there.")
                    for n in heard
                ):
                    await asyncio.sleep(0.05)
        finally:
            await alice.close()
            await bob.close()
            await asyncio.gather(*readers, return_exceptions=True)
        return heard

    heard = asyncio.run(scenario())
    for name, own, other in (
        ("alice", "Alice, your tea is green.", "Bob"),
        ("bob", "Bob, your coffee is black.", "Alice"),
    ):
        texts = [m["msg"]["text"] for m in heard[name] if m.get("topic") == "/fay/reply" and m["msg"]["text"] != "ping"]
        assert texts == [own, "Hello whoever is there."], (name, texts)
        assert other not in json.dumps(heard[name]), f"{name} heard {other}'s conversation"
        cue = [m["msg"] for m in heard[name] if m.get("topic") == "/fay/action_cue" and m["msg"]["code"] == "x"][0]
        assert (cue["behavior"], cue["text"], cue["matched_keywords"]) == ("wave", "", [])


def test_first_start_prints_the_link_once_and_a_loose_file_stops_with_exit_2(tmp_path):
    config_home = tmp_path / "config"
    port, page_port = free_port(), free_port()
    args = ("--no-page", "--bridge", "rs", "--bridge-port", str(port), "--port", str(page_port))
    env = {"XDG_CONFIG_HOME": str(config_home)}
    first = start_web(*args, env=env)
    assert first.stop() == 0
    path = config_home / "fay_ros" / "web_access.yaml"
    token = load(path).clients[0].token
    assert f"ws://127.0.0.1:{port}/?token={token}" in first.output()
    second = start_web(*args, env=env)
    assert second.stop() == 0
    assert token not in second.output() and "--show-urls" in second.output()

    shown = NodeProcess("fay_ros.cli", args=["web", "--show-urls", "--port", str(page_port)], ros=False, env=env)
    assert shown.wait_exit(30) == 0
    assert f"http://127.0.0.1:{page_port}/#token={token}" in shown.output()

    os.chmod(path, 0o644)
    loose = NodeProcess("fay_ros.cli", args=["web", *args], ros=False, env=env)
    assert loose.wait_exit(30) == 2
    assert str(path) in loose.output() and "chmod 600" in loose.output()
    assert token not in loose.output()


def test_on_every_interface_the_page_port_of_the_addressed_host_is_the_face(tmp_path):
    """--host 0.0.0.0 (a tablet on the LAN): the face's origin is the address the browser
    used, so the page port on the host the request is addressed to passes; other sites do not."""
    from fay_ros.web.gate import Gate

    access = tmp_path / "web_access.yaml"
    write_web_access(access, {"user": "face"})
    gate = Gate(
        access=load(access),
        allow=AllowList.build("/fay"),
        namespace="/fay",
        upstream_url="ws://x",
        host="0.0.0.0",
        port=9090,
        origins=loopback_origins("0.0.0.0", 8080),
        page_port=8080,
    )
    assert gate._origin_allowed("http://192.168.1.5:8080", "192.168.1.5:9090")
    assert gate._origin_allowed("http://127.0.0.1:8080", "127.0.0.1:9090")
    assert not gate._origin_allowed("http://192.168.1.5:8081", "192.168.1.5:9090")
    assert not gate._origin_allowed("http://evil.example:8080", "192.168.1.5:9090")
    assert not gate._origin_allowed("http://192.168.1.5.evil.example:8080", "192.168.1.5:9090")
    loopback = Gate(
        access=load(access),
        allow=AllowList.build("/fay"),
        namespace="/fay",
        upstream_url="ws://x",
        host="127.0.0.1",
        port=9090,
        origins=loopback_origins("127.0.0.1", 8080),
        page_port=8080,
    )
    assert not loopback._origin_allowed("http://192.168.1.5:8080", "192.168.1.5:9090")
