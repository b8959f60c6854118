"""The admin page's speaker cards (issue 39): GET /admin/api/card?owner= reads the owner's
card (name, formality, language: their own statements, as self_facts stored them) from the
memory database read-only (`fay-ros web --admin --memory-db`), behind the admin token, each
field with its memory id and the turn it was heard in; one owner's card never in another's."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from fay_ros.cli.web import _card_reader
from fay_ros.memory.service import build_service
from fay_ros.web.access import load as load_access
from fay_ros.web.admin_files import EditableFiles
from fay_ros.web.admin_http import AdminApi
from fay_ros.web.page_server import FaceServer
from harness import write_web_access

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
    said = (
        ("t1", "My name is Tom."),
        ("t2", "Please be formal with me."),
        ("t3", "No need to be so formal."),  # supersedes t2: the card shows the newer wish
        ("t4", "Please answer in Chinese."),
    )
    for n, (turn_id, text) in enumerate(said):
        svc.hear_turn("tom", turn_id, T0 + 60 * n, "user", text)
    svc.hear_turn("ann", "a1", T0, "user", "My name is Annabel. Please speak English to me.")
    svc.store.close()
    tokens = write_web_access(tmp_path / "access.yaml", {"root": "admin", "alice": "face"})
    api = AdminApi(load_access(tmp_path / "access.yaml"), EditableFiles({}), set(), cards=_card_reader(memory_location))
    face = FaceServer("127.0.0.1", 0, {}, admin=api).start()
    yield f"http://127.0.0.1:{face.port}", tokens
    face.stop()


def test_the_card_endpoint_needs_the_admin_token_and_keeps_owners_apart(server):
    base, tokens = server
    url = f"{base}/admin/api/card?owner=tom"
    assert get(url, None)[0] == 401
    assert get(url, tokens["alice"])[0] == 403  # a face token
    status, body = get(url, tokens["root"])
    assert status == 200, body
    card = body["card"]
    shown = {field: (e["key"], e["value"], e["content"], e["evidence"]) for field, e in card.items()}
    assert shown == {
        "name": ("name", "Tom", "User's name is Tom.", ["My name is Tom."]),
        "formality": (
            "address:formality",
            "casually",
            "User wants to be addressed casually.",
            ["No need to be so formal."],
        ),
        "language": (
            "address:language",
            "Chinese",
            "User wants to be answered in Chinese.",
            ["Please answer in Chinese."],
        ),
    }
    assert all(e["memory_id"] for e in card.values())
    assert body["line"] == "call them Tom; answer in Chinese; casually, as a friend (no titles, no honorifics)."
    assert "Annabel" not in json.dumps(body) and "English" not in json.dumps(body)  # ann's card
    ann = get(f"{base}/admin/api/card?owner=ann", tokens["root"])[1]["card"]
    assert (ann["name"]["value"], ann["formality"], ann["language"]["value"]) == ("Annabel", None, "English")
    assert "Tom" not in json.dumps(ann)
    assert get(f"{base}/admin/api/card?owner=", tokens["root"])[0] == 400
    assert get(f"{base}/admin/api/card?owner=nobody", tokens["root"]) == (
        200,
        {"owner": "nobody", "card": {"name": None, "formality": None, "language": None}, "line": ""},
    )


def test_without_a_memory_database_the_card_route_is_absent(tmp_path):
    tokens = write_web_access(tmp_path / "access.yaml", {"root": "admin"})
    api = AdminApi(load_access(tmp_path / "access.yaml"), EditableFiles({}), set())
    face = FaceServer("127.0.0.1", 0, {}, admin=api).start()
    try:
        assert get(f"http://127.0.0.1:{face.port}/admin/api/card?owner=tom", tokens["root"])[0] == 404
    finally:
        face.stop()
