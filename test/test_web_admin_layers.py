"""The admin page's layered-profile view (issue 35): GET /admin/api/profile?owner= reads the
memory database read-only (`fay-ros web --admin --memory-db`), behind the admin token; the
page renders the layers with their evidence and the changelog (headless Chromium), and
"Forget this event" forgets a heard turn through the real memory node's memory/forget
(turn_ids) over the web door and rosbridge-server-rs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from browser_rig import admin_over_memory, needs_chromium, wait_dom
from fay_msgs.msg import Transcript
from fay_msgs.srv import SearchEvidence
from fay_ros.cli.web import _profile_reader
from fay_ros.common import qos, topics
from fay_ros.memory.layers import LayersConfig
from fay_ros.memory.service import build_service
from fay_ros.web.access import load as load_access
from fay_ros.web.admin_files import EditableFiles
from fay_ros.web.admin_http import AdminApi
from fay_ros.web.page_server import FaceServer
from harness import admin_get as get
from harness import free_port, wait_until, write_web_access

REPO = Path(__file__).resolve().parents[1]
T0 = 1_800_000_000.0


@pytest.fixture
def server(tmp_path, memory_location, clock):
    svc = build_service(memory_location, embedder="hashed", clock=clock)
    svc.enable_layers(LayersConfig())
    for n, (text, t) in enumerate((("我喜欢可乐", T0), ("我不喝可乐了", T0 + 60), ("I like tea", T0 + 120)), 1):
        svc.ingest_turn("tom", f"t{n}", t, "user", text)
    svc.ingest_turn("ann", "a1", T0, "user", "I like coffee")
    svc.store.close()
    for name in ("action_rules.csv", "sentiment_lexicon.csv", "persona.yaml", "qa.csv", "schedule.yaml"):
        shutil.copyfile(REPO / "config" / name, tmp_path / name)
    tokens = write_web_access(tmp_path / "access.yaml", {"root": "admin", "alice": "face"})
    files = EditableFiles(
        {
            "rules": tmp_path / "action_rules.csv",
            "lexicon": tmp_path / "sentiment_lexicon.csv",
            "persona": tmp_path / "persona.yaml",
            "qa": tmp_path / "qa.csv",
            "schedule": tmp_path / "schedule.yaml",
        }
    )
    api = AdminApi(load_access(tmp_path / "access.yaml"), files, set(), profiles=_profile_reader(memory_location))
    page_config = {"rosbridge_port": free_port(), "namespace": "/fay", "face_map": None, "live2d": None}
    face = FaceServer("127.0.0.1", 0, page_config, admin=api).start()
    yield f"http://127.0.0.1:{face.port}", tokens
    face.stop()


def test_the_profile_endpoint_needs_the_admin_token_and_keeps_owners_apart(server):
    base, tokens = server
    url = f"{base}/admin/api/profile?owner=tom"
    assert get(url, None)[0] == 401
    assert get(url, tokens["alice"])[0] == 403  # a face token
    status, body = get(url, tokens["root"])
    assert status == 200, body
    prefs = [(p["thing"], p["likes"], p["status"], p["evidence"]) for p in body["layers"]["preferences"]["items"]]
    assert prefs == [
        ("可乐", True, "superseded", ["t1"]),
        ("可乐", False, "current", ["t2"]),
        ("tea", True, "current", ["t3"]),
    ]
    assert "coffee" not in json.dumps(body)  # ann's
    assert [e["turn_id"] for e in body["events"]] == ["t3", "t2", "t1"] and body["changelog"]
    assert get(f"{base}/admin/api/profile?owner=", tokens["root"])[0] == 400
    assert get(f"{base}/admin/api/profile?owner=nobody", tokens["root"])[1]["layers"]["preferences"]["items"] == []


def test_without_a_memory_database_the_route_is_absent(tmp_path):
    tokens = write_web_access(tmp_path / "access.yaml", {"root": "admin"})
    api = AdminApi(load_access(tmp_path / "access.yaml"), EditableFiles({}), set())
    face = FaceServer("127.0.0.1", 0, {}, admin=api).start()
    try:
        assert get(f"http://127.0.0.1:{face.port}/admin/api/profile?owner=tom", tokens["root"])[0] == 404
    finally:
        face.stop()


@pytest.mark.slow
@needs_chromium
@pytest.mark.parametrize("memory_location", ["sqlite"], indirect=True)
def test_the_admin_page_shows_the_layers_and_the_changelog(page, server):
    base, tokens = server
    page.goto(f"{base}/admin/#token={tokens['root']}")
    wait_dom(page, "access", "granted")
    page.fill("#memory-owner", "tom")
    page.click("#layers-go")
    wait_dom(page, "layers", "shown")
    rows = page.inner_text(".layers-preferences")
    assert "superseded" in rows and "dislikes 可乐" in rows and "t2" in rows
    assert "superseded by a statement" in page.inner_text(".layers-changelog")
    assert "I like tea" in page.inner_text(".layers-events")


# -- forgetting an event from the page: through the memory node, over the web door -----------------


@pytest.fixture
def robot(memory_location, tmp_path):
    """The memory node on `memory_location` and `fay-ros web --admin --memory-db` over it."""
    with admin_over_memory(memory_location, tmp_path) as rig:
        yield rig


def hear(ros, owner: str, texts: list[str]) -> None:
    """The owner's words as asr publishes them, one turn each, each taken in by the memory node."""
    speech = ros.publisher(Transcript, topics.SPEECH_FINAL, qos.EVENTS)
    heard = ros.collect(Transcript, topics.MEMORY_HEARD, qos.EVENTS)
    ros.wait_for_subscribers(speech)
    wait_until(lambda: heard.subscription.get_publisher_count() >= 1, message="memory/heard matched")
    for count, text in enumerate(texts, 1):
        speech.publish(Transcript(user_id=owner, text=text, is_final=True, language="zh"))
        heard.wait_for_count(count)


@pytest.mark.slow
@needs_chromium
def test_forget_this_event_forgets_the_turn_and_what_rests_only_on_it(page, robot, ros):
    hear(ros, "lea", ["我喜欢猫", "我喜欢喝茶", "我真的喜欢喝茶"])
    read = _profile_reader(robot["db"])
    wait_until(lambda: len(read("lea")["events"]) == 3, 20, message=lambda: f"three events: {read('lea')['events']}")
    turn = {e["text"]: e["turn_id"] for e in read("lea")["events"]}
    cat, tea = turn["我喜欢猫"], turn["我喜欢喝茶"]

    page.goto(f"{robot['page']}/admin/#token={robot['tokens']['root']}")
    wait_dom(page, "connection", "connected")
    page.fill("#memory-owner", "lea")
    page.click("#layers-go")
    wait_dom(page, "layersEvents", "3")
    assert "likes 猫" in page.inner_text(".layers-preferences")

    page.click(f'tr[data-turn="{cat}"] button.forget-event')
    assert len(read("lea")["events"]) == 3, "forgotten before the second click"
    page.click(f'tr[data-turn="{cat}"] button.forget-event-no')  # changed their mind
    page.click(f'tr[data-turn="{cat}"] button.forget-event')
    page.click(f'tr[data-turn="{cat}"] button.forget-event-yes')
    wait_dom(page, "layersForget", "forgotten")
    wait_dom(page, "layersEvents", "2")
    assert page.locator(f'tr[data-turn="{cat}"]').count() == 0
    assert "猫" not in page.inner_text(".layers-preferences"), "the item resting only on the turn"
    assert f"turn {cat}: forgot 1 turn(s)" in page.inner_text("#layers-status")
    # through the memory node: its turn log forgot the turn too
    found = ros.call(
        SearchEvidence, topics.SRV_SEARCH_EVIDENCE, SearchEvidence.Request(owner="lea", query="我喜欢猫"), timeout=30
    )
    assert found.success and cat not in [e.id for e in found.items] and found.items

    page.click(f'tr[data-turn="{tea}"] button.forget-event')
    page.click(f'tr[data-turn="{tea}"] button.forget-event-yes')
    wait_dom(page, "layersEvents", "1")
    tastes = page.inner_text(".layers-preferences")
    assert "likes 茶" in tastes and turn["我真的喜欢喝茶"] in tastes and tea not in tastes  # other evidence
    prefs = read("lea")["layers"]["preferences"]["items"]
    assert [(p["thing"], p["evidence"]) for p in prefs] == [("茶", [turn["我真的喜欢喝茶"]])]
    assert "我喜欢猫" not in robot["memory"].output()
