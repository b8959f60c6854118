"""The admin page's layered-profile view (issue 35): GET /admin/api/profile?owner= reads the
memory database read-only (`fay-ros web --admin --memory-db`), behind the admin token; the
page renders the layers with their evidence and the changelog (headless Chromium)."""

from __future__ import annotations

import json
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from browser_rig import needs_chromium, wait_dom
from fay_ros.cli.web import _profile_reader
from fay_ros.memory.layers import LayersConfig
from fay_ros.memory.service import build_service
from fay_ros.web.access import load as load_access
from fay_ros.web.admin_files import EditableFiles
from fay_ros.web.admin_http import AdminApi
from fay_ros.web.page_server import FaceServer
from harness import free_port, write_web_access

REPO = Path(__file__).resolve().parents[1]
T0 = 1_800_000_000.0


def get(url: str, token: str | None) -> tuple[int, dict]:
    headers = {"X-Fay-Token": token} if token else {}
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(urllib.request.Request(url, headers=headers), timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


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
