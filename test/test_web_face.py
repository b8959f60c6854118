"""The web face in a real browser: headless Chromium (Debian's, driven by Playwright) loads the
page from `fay-ros web`, rclpy publishes ActionCue / VisemeTrack / Utterance / SpeechState on
the real DDS graph, they cross the real rosbridge endpoint, and the test reads the face's
state back from the DOM and from screenshots.

Set FAY_UPDATE_FACE_PNG=1 to refresh the docs/face.png artifact from this run.
"""

from __future__ import annotations

import pytest

from browser_rig import (
    connected_page,
    cue,
    dom,
    face_web,
    keep_screenshot,
    needs_chromium,
    png_size,
    publish_speaking,
    wait_dom,
)
from fay_msgs.msg import ActionCue, SpeechState, Transcript, Utterance, Viseme, VisemeTrack
from fay_ros.common import qos, topics
from harness import free_port, start_web, wait_until, write_web_access

# A motion holds this long in the test's copy of the table, so the priority checks below do
# not depend on how fast a loaded machine delivers the next cue.
HOLD_SECONDS = 30.0

pytestmark = [pytest.mark.slow, needs_chromium]  # a real browser; each test stays under ~6 s


@pytest.fixture(scope="module")
def web_face(tmp_path_factory):
    """`fay-ros web` with the rs bridge: {url (with the token), bridge_port, token, proc}."""
    with face_web(tmp_path_factory, hold_seconds=HOLD_SECONDS) as web:
        yield web


@pytest.fixture(scope="module")
def face_url(web_face):
    return web_face["url"]


def events(page, kind: str) -> list[dict]:
    return page.evaluate("k => window.fayFace.state.events.filter(e => e.kind === k)", kind)


def test_cues_drive_expression_motion_and_priority(page, face_url, ros):
    cues = ros.publisher(ActionCue, topics.ACTION_CUE, qos.EVENTS)
    connected_page(page, face_url, ros, cues)
    state = dom(page)
    assert state["expression"] == "F01" and state["motion"] == "Idle" and state["renderer"] == "svg"

    cues.publish(cue("nod", "serious", 0.9, priority=50, uid="a:0"))
    state = wait_dom(page, "motion", "TapBody:1")  # nod, strong variant at intensity 0.9
    assert state["expression"] == "F02" and state["behavior"] == "nod"
    assert page.get_attribute("#motion", "data-animation") == "nod"

    cues.publish(cue("wave", "sad", 0.9, priority=10, uid="a:1"))  # lower priority while nod holds
    wait_dom(page, "expression", "F03")  # the affect still applies at once
    assert dom(page)["motion"] == "TapBody:1", "a lower-priority cue cut the running motion short"
    assert [e["behavior"] for e in events(page, "cue-dropped")] == ["wave"]

    cues.publish(cue("shake", "excited", 0.3, priority=90, uid="a:2"))  # higher priority preempts
    state = wait_dom(page, "motion", "TapBody:4")  # shake, light variant at intensity 0.3
    assert state["expression"] == "F04"
    assert page.get_attribute("#motion", "data-animation") == "shake"

    cues.publish(cue("moonwalk", "puzzled", 0.9, priority=95, sentiment=-0.8, uid="a:3"))
    wait_dom(page, "behavior", "moonwalk")  # unknown words: table defaults, sentiment fallback
    state = dom(page)
    assert state["expression"] == "F03" and state["motion"] == "TapBody:4"


def test_mouth_follows_the_viseme_track_stamp(page, face_url, ros, tmp_path):
    tracks = ros.publisher(VisemeTrack, topics.VISEMES, qos.EVENTS)
    replies = ros.publisher(Utterance, topics.REPLY, qos.EVENTS)
    connected_page(page, face_url, ros, tracks, replies)
    closed_png = page.screenshot()

    replies.publish(
        Utterance(conversation_id="v", seq=0, text="你好，我是 Fay。", is_first=True, is_end=True, source="llm")
    )
    wait_until(
        lambda: page.inner_text("#subtitle") == "你好，我是 Fay。",
        20,
        message=lambda: f"the subtitle; now {page.inner_text('#subtitle')!r}",
    )
    assert "shown" in page.get_attribute("#subtitle", "class")

    # The audio of this sentence starts 1.5 s from now; the mouth must wait for it.
    start = ros.node.get_clock().now().nanoseconds + 1_500_000_000
    track = VisemeTrack(
        utterance_id="v:0",
        duration=3.0,
        frames=[
            Viseme(id=Viseme.SIL, name="sil", start=0.0, mouth_open=0.0),
            # mouth_open in the message says 0.5, the face's own table says aa -> 0.9: the table wins.
            Viseme(id=Viseme.AA, name="aa", start=0.2, mouth_open=0.5),
            Viseme(id=Viseme.OH, name="oh", start=1.6, mouth_open=0.7),
            Viseme(id=Viseme.SIL, name="sil", start=2.6, mouth_open=0.0),
        ],
    )
    track.header.stamp.sec, track.header.stamp.nanosec = divmod(start, 1_000_000_000)
    tracks.publish(track)

    wait_dom(page, "viseme", "aa")
    state = dom(page)
    assert state["mouth"] == "0.90" and state["clock"] == "synced" and state["utterance"] in ("", "v:0")
    open_png = page.screenshot()
    wait_dom(page, "viseme", "oh")
    assert dom(page)["mouth"] == "0.70"
    state = wait_until(
        lambda: (
            dom(page)
            if dom(page)["mouth"] == "0.00"
            and events(page, "mouth")[-1:]
            and events(page, "mouth")[-1]["viseme"] == "sil"
            else None
        ),
        20,
        message=lambda: f"the mouth to close at the end of the track; now {dom(page)}",
    )

    # Scheduled against header.stamp: each frame at stamp + start, never before it.
    stamp_ms = start / 1e6
    applied = [e for e in events(page, "mouth") if e["utterance"] == "v:0"]
    assert [e["viseme"] for e in applied] == ["sil", "aa", "oh", "sil"]
    for e, offset in zip(applied, (0.0, 0.2, 1.6, 2.6)):
        assert abs(e["at"] - (stamp_ms + offset * 1000)) < 1.0, e
        assert e["applied"] >= e["at"] - 1.0, f"{e['viseme']} opened the mouth before its audio"

    # The screenshots show it too: the open mouth changes the picture.
    assert png_size(open_png) == png_size(closed_png) == (640, 760)
    assert open_png != closed_png
    keep_screenshot(open_png, "face.png", tmp_path, "FAY_UPDATE_FACE_PNG")


def test_a_held_voice_closes_the_mouth_and_its_moved_track_opens_it_again(page, face_url, ros):
    from fay_ros.voice.visemes import held_track

    tracks = ros.publisher(VisemeTrack, topics.VISEMES, qos.EVENTS)
    replies = ros.publisher(Utterance, topics.REPLY, qos.EVENTS)
    connected_page(page, face_url, ros, tracks, replies)

    def track(frames, duration: float, start_ns: int, uid: str = "h:0") -> VisemeTrack:
        msg = VisemeTrack(
            utterance_id=uid,
            duration=duration,
            frames=[
                Viseme(id=getattr(Viseme, name.upper()), name=name, start=at, mouth_open=0.0) for name, at in frames
            ],
        )
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(start_ns, 1_000_000_000)
        return msg

    now = ros.node.get_clock().now().nanoseconds
    tracks.publish(track([("sil", 0.0), ("aa", 0.1)], 60.0, now))  # open for a minute
    wait_dom(page, "viseme", "aa")
    # a person talks over the robot: the tts publishes the closed-mouth track of the held sentence
    held = held_track("h:0")
    held_at = ros.node.get_clock().now().nanoseconds
    tracks.publish(track([(f.name, f.start) for f in held.frames], held.duration, held_at))
    wait_until(
        lambda: dom(page)["mouth"] == "0.00" or None,
        10,
        message=lambda: f"the mouth to close while held; now {dom(page)}",
    )
    # it goes on: the sentence's track again, its start moved (the audio left plays from now)
    tracks.publish(track([("sil", 0.0), ("oh", 0.1)], 10.0, ros.node.get_clock().now().nanoseconds - 5_000_000_000))
    wait_dom(page, "viseme", "oh")
    assert dom(page)["mouth"] == "0.70"


def test_speaking_state_subtitles_blink_breath_and_typed_chat(page, face_url, ros):
    cues = ros.publisher(ActionCue, topics.ACTION_CUE, qos.EVENTS)
    speaking = ros.publisher(SpeechState, topics.ROBOT_SPEAKING, qos.LATCHED)
    tracks = ros.publisher(VisemeTrack, topics.VISEMES, qos.EVENTS)
    typed = ros.collect(Transcript, topics.TEXT_INPUT, qos.EVENTS)
    connected_page(page, face_url, ros, cues, speaking, tracks)

    publish_speaking(page, speaking, "s:0")
    cues.publish(cue("celebrate", "excited", 0.9, priority=60, uid="s:0"))
    wait_dom(page, "expression", "F04")
    long_track = VisemeTrack(
        utterance_id="s:0", duration=60.0, frames=[Viseme(id=Viseme.AA, name="aa", start=0.0, mouth_open=0.9)]
    )
    long_track.header.stamp = ros.node.get_clock().now().to_msg()
    tracks.publish(long_track)
    wait_dom(page, "mouth", "0.90")

    # Barge-in: speaking stops long before the track ends -> mouth shut, rest expression.
    state = publish_speaking(page, speaking, "")
    state = wait_dom(page, "mouth", "0.00")
    assert state["expression"] == "F01"
    assert [e["utterance"] for e in events(page, "track-stopped")] == ["s:0"]

    # Idle life: the eyes blink now and then, the figure breathes.
    wait_until(lambda: int(dom(page)["blinks"]) >= 1, 20, message="an eye blink")
    assert page.evaluate("getComputedStyle(document.getElementById('breath')).animationName") == "breathe"

    # Typed chat goes out on text_input as a Transcript of the user the page's token is bound to.
    ros.wait_for_publishers(topics.TEXT_INPUT)

    def delivered():
        if not typed.messages:  # a message sent before discovery settled may be lost: send again
            page.fill("#chat-text", "今天天气怎么样？")
            page.click("#chat-send")
        return typed.messages

    wait_until(delivered, timeout=20, interval=0.5, message="a Transcript typed in the page")
    msg = typed.messages[0]
    assert (msg.text, msg.user_id, msg.is_final) == ("今天天气怎么样？", "user", True)


def test_page_reconnects_by_itself(page, ros, tmp_path):
    page_port, bridge_port = free_port(), free_port()
    access = tmp_path / "web_access.yaml"
    token = write_web_access(access, {"user": "face"})["user"]
    page_only = start_web("--bridge", "none", "--port", str(page_port), "--bridge-port", str(bridge_port))
    # --port names the page whose origin the websocket accepts
    bridge_args = (
        "--no-page",
        "--bridge",
        "rs",
        "--port",
        str(page_port),
        "--bridge-port",
        str(bridge_port),
        "--access-file",
        str(access),
    )
    bridge = None
    try:
        speaking = ros.publisher(SpeechState, topics.ROBOT_SPEAKING, qos.LATCHED)
        speaking.publish(SpeechState(speaking=True, utterance_id="r:0"))  # latched, before any bridge
        page.goto(f"http://127.0.0.1:{page_port}/#token={token}")
        wait_dom(page, "connection", "disconnected")
        assert "token" not in page.url, "the token stays in the address bar"

        bridge = start_web(*bridge_args)
        wait_dom(page, "connection", "connected")
        assert page.inner_text("#connection-text").startswith("connected")
        # The latched speaking state published before the page connected still arrives.
        wait_dom(page, "speaking", "true")

        assert bridge.stop() == 0
        wait_dom(page, "connection", "disconnected")
        bridge = start_web(*bridge_args)
        wait_dom(page, "connection", "connected")
        assert page.evaluate("window.fayFace.state.reconnects") >= 2
        # The face reopens without the link, in a new tab too: the token is kept in this
        # origin's localStorage.
        assert page.evaluate("localStorage.getItem('fay_ros.token')") == token
        page.goto(f"http://127.0.0.1:{page_port}/")
        wait_dom(page, "connection", "connected")
    finally:
        if bridge is not None:
            bridge.stop()
        page_only.stop()


ATTACKER_PAGE = """<!doctype html><title>some other site</title><script>
window.result = {opened: 0, messages: [], closed: 0, errors: 0};
function probe(url) {
  const ws = new WebSocket(url);
  ws.onopen = () => { window.result.opened += 1;
    ws.send(JSON.stringify({op: 'subscribe', topic: '/fay/reply', type: 'fay_msgs/msg/Utterance'})); };
  ws.onmessage = (e) => window.result.messages.push(String(e.data));
  ws.onerror = () => { window.result.errors += 1; };
  ws.onclose = () => { window.result.closed += 1; };
}
const port = new URLSearchParams(location.search).get('port');
const token = new URLSearchParams(location.search).get('token');
probe('ws://127.0.0.1:' + port + '/');                   // no token
probe('ws://127.0.0.1:' + port + '/?token=' + token);    // even with a stolen token
</script>"""


def test_a_page_from_another_origin_is_refused_and_receives_nothing(browser, web_face, ros, tmp_path):
    """Cross-site websocket hijacking: a page of another origin, open in the same browser,
    tries the companion's websocket with and without the token and gets nothing."""
    import threading
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    (tmp_path / "index.html").write_text(ATTACKER_PAGE)
    handler = partial(SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *a: None
    attacker = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    replies = ros.publisher(Utterance, topics.REPLY, qos.EVENTS)
    page = browser.new_page()
    try:
        page.goto(
            f"http://127.0.0.1:{attacker.server_address[1]}/?port={web_face['bridge_port']}&token={web_face['token']}"
        )
        for _ in range(3):  # something to leak, were the socket open
            replies.publish(Utterance(user_id="user", conversation_id="user-1-x", text="a private reply", is_end=True))
        result = wait_until(
            lambda: (r := page.evaluate("window.result"))["closed"] == 2 and r,
            timeout=20,
            message=lambda: f"both sockets closed: {page.evaluate('window.result')}",
        )
        assert result["opened"] == 0 and result["messages"] == [], result
        assert web_face["proc"].output().count("is not the face's") >= 2
    finally:
        page.close()
        attacker.shutdown()
        attacker.server_close()
