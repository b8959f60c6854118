"""The admin page's Knowledge base panel (issue 41): GET /admin/api/knowledge lists the
documents of the knowledge base (`fay-ros web --admin --knowledge-db`), behind the admin token:
each with its knowledge base, chunk count, when it was indexed and its error; the page shows
them (headless Chromium). A real SQLite knowledge base over the shop's documents and a file it
cannot read."""

from __future__ import annotations

from pathlib import Path

import pytest

from browser_rig import needs_chromium, wait_dom
from fay_ros.cli.web import _knowledge_reader
from fay_ros.knowledge.base import KnowledgeBase, KnowledgeSettings
from fay_ros.web.access import load as load_access
from fay_ros.web.admin_files import EditableFiles
from fay_ros.web.admin_http import AdminApi
from fay_ros.web.page_server import FaceServer
from harness import free_port, start_web, write_web_access
from test_web_admin_reminders import get

SHOP = Path(__file__).parent / "data" / "knowledge_shop"


@pytest.fixture
def knowledge_db(tmp_path) -> str:
    folder = tmp_path / "shop"
    folder.mkdir()
    for name in ("hours.md", "营业时间.md"):
        (folder / name).write_bytes((SHOP / name).read_bytes())
    (folder / "broken.txt").write_bytes(bytes(range(256)) * 64)  # binary, named .txt
    db = str(tmp_path / "knowledge.db")
    kb = KnowledgeBase(KnowledgeSettings(db=db))  # the default embedder, as `fay-ros knowledge add`
    report = kb.add([folder], kb="shop")
    kb.close()
    assert [source for source, _why in report.failed] == ["broken.txt"]
    return db


def serve(tmp_path: Path, knowledge) -> tuple[FaceServer, dict]:
    tokens = write_web_access(tmp_path / "access.yaml", {"root": "admin", "alice": "face"})
    api = AdminApi(load_access(tmp_path / "access.yaml"), EditableFiles({}), set(), knowledge=knowledge)
    return FaceServer("127.0.0.1", 0, {}, admin=api).start(), tokens


def test_the_knowledge_endpoint_lists_documents_chunks_times_and_errors_for_an_admin(tmp_path, knowledge_db):
    face, tokens = serve(tmp_path, _knowledge_reader(knowledge_db))
    try:
        url = f"http://127.0.0.1:{face.port}/admin/api/knowledge"
        assert get(url, None)[0] == 401
        assert get(url, tokens["alice"])[0] == 403  # a face token
        status, body = get(url, tokens["root"])
        assert status == 200, body
        shown = {d["source"]: d for d in body["documents"]}
        assert set(shown) == {"hours.md", "营业时间.md", "broken.txt"}
        for name in ("hours.md", "营业时间.md"):
            assert shown[name]["kb"] == "shop" and shown[name]["chunks"] >= 2 and not shown[name]["error"]
            assert shown[name]["indexed_at"] > 0 and shown[name]["indexed_local"][:2] == "20"
        assert "broken.txt" in shown["broken.txt"]["error"] and shown["broken.txt"]["chunks"] == 0
        assert body["location"].endswith("knowledge.db")
    finally:
        face.stop()


def test_without_a_knowledge_base_the_route_is_absent_and_a_missing_file_is_not_made(tmp_path):
    face, tokens = serve(tmp_path, None)
    try:
        assert get(f"http://127.0.0.1:{face.port}/admin/api/knowledge", tokens["root"])[0] == 404
    finally:
        face.stop()
    missing = tmp_path / "nowhere" / "knowledge.db"
    face, tokens = serve(tmp_path, _knowledge_reader(str(missing)))
    try:
        status, body = get(f"http://127.0.0.1:{face.port}/admin/api/knowledge", tokens["root"])
        assert status == 503 and "no knowledge base there" in body["error"]
        assert not missing.exists()
    finally:
        face.stop()


@pytest.mark.slow
@needs_chromium
def test_the_panel_shows_the_documents_and_marks_the_one_that_failed(page, tmp_path, knowledge_db):
    tokens = write_web_access(tmp_path / "access.yaml", {"root": "admin"})
    port = free_port()
    web = start_web(
        "--admin",
        "--bridge",
        "rs",
        "--port",
        str(port),
        "--bridge-port",
        str(free_port()),
        "--access-file",
        str(tmp_path / "access.yaml"),
        "--knowledge-db",
        knowledge_db,
    )
    try:
        page.goto(f"http://127.0.0.1:{port}/admin/#token={tokens['root']}")
        page.wait_for_function("document.body.dataset.access === 'granted'")
        page.click("#knowledge-go")
        wait_dom(page, "knowledgeCount", "3")
        hours = page.inner_text('tr[data-source="hours.md"]')
        assert "shop" in hours and "never" not in hours, hours
        assert page.locator('tr[data-source="broken.txt"].failed').count() == 1
        assert "1 with an error" in page.inner_text("#knowledge-status")
    finally:
        web.stop()
        assert tokens["root"] not in web.output(), "a token reached the log of fay-ros web"
