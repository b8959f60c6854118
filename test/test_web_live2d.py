"""A real Live2D model in a real browser: `fay-ros web --live2d sample` serves the shizuku sample
(Cubism 2, installed from npm by scripts/post_setup.d/live2d.sh) to headless Chromium, rclpy
publishes VisemeTrack / SpeechState / ActionCue on the real DDS graph through the real
rosbridge endpoint, and the test reads back from the Live2D runtime itself what the model does:
its mouth parameter over time, its current expression and its current motion.

Set FAY_UPDATE_FACE_PNG=1 to refresh docs/face-live2d.png from this run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError

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
from fay_msgs.msg import ActionCue, SpeechState, Utterance, Viseme, VisemeTrack
from fay_ros.common import qos, topics
from fay_ros.web.face_map import validate
from fay_ros.web.page_server import Live2DError, find_live2d, sample_live2d_folder
from harness import free_port, start_web, wait_until

REPO = Path(__file__).resolve().parents[1]
MOUTH = "PARAM_MOUTH_OPEN_Y"  # the sample's (Cubism 2) name for ParamMouthOpenY
FORM = "PARAM_MOUTH_FORM"
# Onset error bound on the page's own (stopped and moved) clock: the page applies a frame at its
# next model update, an animation frame (16 ms) after the face's tick (every 30 ms at most).
ONSET_BOUND_MS = 50.0

pytestmark = [
    pytest.mark.slow,  # a real browser rendering a real model
    needs_chromium,
    pytest.mark.skipif(os.environ.get("FAY_LIVE2D") == "skip", reason="FAY_LIVE2D=skip: no Live2D sample"),
]


@pytest.fixture(scope="module")
def sample_installed():
    if not (sample_live2d_folder() / "shizuku" / "shizuku.model.json").is_file():
        pytest.fail(
            f"the Live2D sample is not installed in {sample_live2d_folder()}: run `make setup` "
            "(scripts/post_setup.d/live2d.sh), or FAY_LIVE2D=skip to leave Live2D out"
        )


@pytest.fixture(scope="module")
def live2d_web(sample_installed, tmp_path_factory):
    """`fay-ros web --live2d sample` with the rs bridge and a face token."""
    with face_web(tmp_path_factory, "--live2d", "sample") as web:
        yield web


def live2d_page(page, web, ros, *publishers, query: str = "") -> None:
    connected_page(page, f"{web['base']}{query}#token={web['token']}", ros, *publishers)
    page.evaluate("() => window.fayFace.ready")
    state = dom(page)
    assert state["renderer"] == "live2d", state["renderer"]


def model_events(page) -> list[dict]:
    """What the face logged (web/face.js `log`): kind, t and details."""
    return page.evaluate("() => window.fayFace.state.events")


def stop_page_clock(page) -> int:
    """Stop the page's installed clock a little ahead of its time; return the time (ms) it
    stopped at. On a loaded machine the page's time can pass the chosen moment before the
    request reaches it ("cannot fast-forward to the past"): then choose a later one."""
    stopped: list[int] = []

    def try_to_stop() -> bool:
        at_ms = int(page.evaluate("Date.now()")) + 200
        try:
            page.clock.pause_at(at_ms / 1000)  # Python: seconds
        except PlaywrightError as exc:
            if "to the past" not in str(exc):
                raise
            return False
        stopped.append(at_ms)
        return True

    wait_until(try_to_stop, 20, message="the page's clock to stop")
    return stopped[-1]


def model(page, call: str):
    """A read-back of the Live2D runtime (window.fayFace.live2d, web/live2d_face.js)."""
    return page.evaluate(f"() => window.fayFace.live2d.{call}")


def test_the_sample_model_loads_with_its_profile(page, live2d_web, ros):
    live2d_page(page, live2d_web, ros)
    assert model(page, "cubism") == 2 and model(page, "profile") == "shizuku"
    assert model(page, "mouthParameter") == MOUTH
    assert set(model(page, "expressions()")) >= {"f01", "f02", "f03", "f04"}
    assert {"idle", "tap_body"} <= set(model(page, "groups()"))
    # At rest: the rest expression F01 (the sample's f01) and the idle group playing by itself.
    wait_until(
        lambda: model(page, "expression()") == "f01",
        20,
        message=lambda: f"expression f01; now {model(page, 'expression()')!r}",
    )
    wait_until(
        lambda: model(page, "motion()").startswith("idle:"),
        20,
        message=lambda: f"an idle motion; now {model(page, 'motion()')!r}",
    )


def test_mouth_parameter_follows_the_viseme_track_on_the_audio_clock(page, live2d_web, ros, tmp_path):
    tracks = ros.publisher(VisemeTrack, topics.VISEMES, qos.EVENTS)
    speaking = ros.publisher(SpeechState, topics.ROBOT_SPEAKING, qos.LATCHED)
    replies = ros.publisher(Utterance, topics.REPLY, qos.EVENTS)
    # The page's Date, timers and animation frames run on a clock the test can stop and move:
    # what the model does at each moment of the track then does not depend on how loaded the
    # machine is (a starved renderer once skipped 450 ms of real time).
    page.clock.install()
    live2d_page(page, live2d_web, ros, tracks, speaking, replies)

    publish_speaking(page, speaking, "l:0")
    replies.publish(
        Utterance(conversation_id="l", seq=0, text="你好，我是 Fay。", is_first=True, is_end=True, source="llm")
    )
    # The sentence's audio starts 1.5 s after the clock stops; the mouth must wait for it, then
    # open and close with each frame. Values are the table's (aa 0.9, oh 0.7, ih 0.45), not
    # mouth_open. The last vowel is long enough for a screenshot of the open mouth.
    frames = [
        ("sil", 0.0, 0.0),
        ("aa", 0.2, 0.9),
        ("sil", 0.7, 0.0),
        ("oh", 1.1, 0.7),
        ("sil", 1.6, 0.0),
        ("ih", 2.0, 0.45),
        ("sil", 2.5, 0.0),
        ("aa", 2.8, 0.9),
        ("sil", 4.8, 0.0),
    ]
    viseme_ids = {"sil": Viseme.SIL, "aa": Viseme.AA, "oh": Viseme.OH, "ih": Viseme.IH}
    stopped_ms = stop_page_clock(page)
    stamp_ms = stopped_ms + 1500
    end_ms = stamp_ms + 5000
    track = VisemeTrack(
        utterance_id="l:0",
        duration=5.0,
        frames=[Viseme(id=viseme_ids[name], name=name, start=at, mouth_open=0.5) for name, at, _ in frames],
    )
    track.header.stamp.sec, track.header.stamp.nanosec = divmod(stamp_ms * 1_000_000, 1_000_000_000)
    tracks.publish(track)
    wait_until(
        lambda: any(e["kind"] == "track" and e["utterance"] == "l:0" for e in model_events(page)),
        20,
        message=lambda: f"the track on the page; its events: {model_events(page)[-5:]}",
    )
    assert dom(page)["clock"] == "synced", dom(page)

    def page_time() -> float:
        return page.evaluate("Date.now()")

    def move_to(at_ms: float) -> None:
        page.clock.run_for(int(at_ms - page_time()))

    # While "oh" sounds (1.1-1.6 s), the model holds the mouth at 0.7 and the vowel form the
    # profile gives it.
    move_to(stamp_ms + 1350)
    mouth, form = page.evaluate(
        f"() => {{ const m = window.fayFace.live2d; return [m.param('{MOUTH}'), m.param('{FORM}')]; }}"
    )
    assert mouth == pytest.approx(0.7, abs=1e-3) and form == pytest.approx(0.0, abs=1e-3), (mouth, form)
    move_to(stamp_ms + 2950)
    assert dom(page)["viseme"] == "aa", dom(page)
    screenshot = page.screenshot()
    move_to(end_ms + 250)
    assert dom(page)["mouth"] == "0.00", dom(page)
    page.clock.resume()
    speaking.publish(SpeechState(speaking=False, utterance_id=""))

    # The model's own parameter, sampled at every model update where it changed.
    samples = [s for s in model(page, "mouthSamples()") if s["t"] >= stamp_ms - 1000]
    opened = [s for s in samples if s["value"] > 1e-3]
    assert opened, f"the model's mouth never opened: {samples}"
    assert opened[0]["t"] >= stamp_ms + 200, "the mouth opened before the sentence's first vowel played"
    assert opened[-1]["t"] <= end_ms + ONSET_BOUND_MS, "the mouth stayed open after the track"
    onsets = []
    cursor = 0
    for name, at, value in frames[1:]:
        due = stamp_ms + at * 1000
        hit = next(
            (
                i
                for i in range(cursor, len(samples))
                if samples[i]["t"] >= due and samples[i]["value"] == pytest.approx(value, abs=1e-3)
            ),
            None,
        )
        assert hit is not None, f"{name} ({value}) never reached the model after {at}s: {samples}"
        onsets.append(samples[hit]["t"] - due)
        cursor = hit
    print(f"\nLive2D mouth onset (ms after each frame's audio time, page clock): {[round(e) for e in onsets]}")
    assert all(0 <= e < ONSET_BOUND_MS for e in onsets), onsets

    assert png_size(screenshot) == (640, 760)
    keep_screenshot(screenshot, "face-live2d.png", tmp_path, "FAY_UPDATE_FACE_PNG")


def test_affect_switches_the_expression_and_behavior_starts_the_mapped_motion(page, live2d_web, ros):
    cues = ros.publisher(ActionCue, topics.ACTION_CUE, qos.EVENTS)
    live2d_page(page, live2d_web, ros, cues)

    # sad -> F03 -> the sample's f02; nod at 0.9 -> strong variant -> tap_body:1 (shizuku profile)
    cues.publish(cue("nod", "sad", 0.9, priority=50, uid="m:0"))
    state = wait_dom(page, "modelMotion", "tap_body:1")
    assert state["expression"] == "F03" and state["motion"] == "TapBody:1"
    wait_until(
        lambda: model(page, "expression()") == "f02",
        20,
        message=lambda: f"the model's expression f02; now {model(page, 'expression()')!r}",
    )
    wait_until(
        lambda: model(page, "motion()") == "tap_body:1",
        20,
        message=lambda: f"the model playing tap_body:1; now {model(page, 'motion()')!r}",
    )

    # excited -> F04 -> f04; a higher-priority think at 0.3 -> light variant -> pinch_in:0
    cues.publish(cue("think", "excited", 0.3, priority=90, uid="m:1"))
    wait_dom(page, "modelMotion", "pinch_in:0")
    wait_until(
        lambda: model(page, "expression()") == "f04",
        20,
        message=lambda: f"the model's expression f04; now {model(page, 'expression()')!r}",
    )
    wait_until(
        lambda: model(page, "motion()") == "pinch_in:0",
        20,
        message=lambda: f"the model playing pinch_in:0; now {model(page, 'motion()')!r}",
    )

    # When the motion is over, the model goes back to its idle group by itself.
    wait_until(
        lambda: model(page, "motion()").startswith("idle:"),
        30,
        message=lambda: f"back to an idle motion; now {model(page, 'motion()')!r}",
    )


def test_page_option_chooses_the_face(browser, live2d_web, sample_installed):
    """?face=svg keeps the SVG face even with --live2d; without --live2d the installed sample
    is offered and ?face=live2d picks it (the SVG face stays the default)."""
    page = browser.new_page()
    try:
        page.goto(f"{live2d_web['base']}?face=svg")
        page.evaluate("() => window.fayFace.ready")
        assert dom(page)["renderer"] == "svg"
    finally:
        page.close()
    port = free_port()
    plain = start_web("--bridge", "none", "--port", str(port))
    try:
        for query, renderer in (("", "svg"), ("?face=live2d", "live2d")):
            page = browser.new_page()
            try:
                page.goto(f"http://127.0.0.1:{port}/{query}")
                page.evaluate("() => window.fayFace.ready")
                assert dom(page)["renderer"] == renderer, (query, dom(page)["renderer"])
            finally:
                page.close()
    finally:
        plain.stop()


# ---- the table's live2d section and the folder lookup (no browser) ------------------------


def shipped_table() -> dict:
    return json.loads((REPO / "web" / "face_map.json").read_text())


def test_shipped_live2d_profiles_are_valid_and_mistakes_are_named():
    table = shipped_table()
    assert validate(table) == []
    shizuku = table["live2d"]["profiles"]["shizuku"]
    del shizuku["behaviors"]["nod"]
    shizuku["behaviors"]["wave"] = {"group": "tap_body", "indexes": [0, 1, 2]}
    shizuku["expressions"]["smile"] = "f01"
    shizuku["mouth_form"]["visemes"]["zz"] = 0.5
    table["live2d"]["profiles"]["another"] = {"expressions": {}}  # a second fallback profile
    problems = validate(table)
    assert "live2d.profiles.shizuku.behaviors.nod: missing (every vocabulary behavior needs an entry)" in problems
    assert any(
        p.startswith("live2d.profiles.shizuku.behaviors.wave.indexes: expected null, [index]") for p in problems
    ), problems
    assert any(
        p.startswith("live2d.profiles.shizuku.expressions key: expected an expression name") for p in problems
    ), problems
    assert "live2d.profiles.shizuku.mouth_form.visemes.zz: not an OVR viseme" in problems
    assert any("more than one profile without model_file" in p for p in problems), problems


def test_cubism2_folder_lookup_names_what_is_missing(tmp_path):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "m.model.json").write_text("{}")
    with pytest.raises(Live2DError, match=r"lacks live2d\.min\.js, pixi\.min\.js, cubism2\.min\.js for its Cubism 2"):
        find_live2d(tmp_path)
    for name in ("live2d.min.js", "pixi.min.js", "cubism2.min.js"):
        (tmp_path / name).write_text("//")
    assets = find_live2d(tmp_path)
    assert (assets.cubism, assets.model, assets.scripts) == (
        2,
        "m/m.model.json",
        ("live2d.min.js", "pixi.min.js", "cubism2.min.js"),
    )
    assert assets.page_config(default=False) == {
        "scripts": ["/live2d/live2d.min.js", "/live2d/pixi.min.js", "/live2d/cubism2.min.js"],
        "model": "/live2d/m/m.model.json",
        "cubism": 2,
        "default": False,
    }
    (tmp_path / "other.model3.json").write_text("{}")
    with pytest.raises(Live2DError, match="holds 2 model files"):
        find_live2d(tmp_path)


def test_live2d_sample_word_finds_the_installed_sample(sample_installed):
    assets = find_live2d("sample")
    assert assets.folder == sample_live2d_folder().resolve() and assets.model == "shizuku/shizuku.model.json"
    assert assets.cubism == 2
