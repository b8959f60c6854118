"""The admin page's Reminders panel (issue 36): GET /admin/api/reminders?owner= reads the
memory database read-only through the one ReminderBook (`fay-ros web --admin --memory-db`),
behind the admin token; the page lists the owner's reminders and open commitments (headless
Chromium), and "Cancel" cancels a reminder through the real memory node's memory/reminders
over the web door and rosbridge-server-rs."""

from __future__ import annotations

import json
import time

import pytest

from browser_rig import admin_over_memory, needs_chromium, wait_dom
from fay_msgs.srv import Reminders as RemindersSrv
from fay_ros.cli.web import _reminder_reader
from fay_ros.common import topics
from fay_ros.memory.backend import open_store
from fay_ros.memory.embeddings import HashedNgramEmbedder
from fay_ros.memory.reminder_book import ReminderBook
from fay_ros.web.access import load as load_access
from fay_ros.web.admin_files import EditableFiles
from fay_ros.web.admin_http import AdminApi
from fay_ros.web.page_server import FaceServer
from harness import admin_get as get
from harness import write_web_access

TZ = "Asia/Shanghai"


def tomorrow_at(hhmm: str) -> str:
    day = time.strftime("%Y-%m-%d", time.localtime(time.time() + 2 * 86400))
    return f"{day}T{hhmm}:00"


@pytest.fixture
def server(tmp_path):
    db = str(tmp_path / "memory.db")
    store = open_store(db, HashedNgramEmbedder(), clock=time.time)
    book = ReminderBook(store.reminder_tables())
    book.add("tom", TZ, tomorrow_at("09:30"), "FREQ=DAILY;BYHOUR=9;BYMINUTE=30", "water the basil")
    book.add("tom", TZ, tomorrow_at("18:00"), "", "call my mother")
    book.add_commitment("tom", "call the dentist")
    book.add("ann", TZ, tomorrow_at("08:00"), "", "ann's secret errand")
    store.close()
    tokens = write_web_access(tmp_path / "access.yaml", {"root": "admin", "alice": "face"})
    api = AdminApi(load_access(tmp_path / "access.yaml"), EditableFiles({}), set(), reminders=_reminder_reader(db))
    face = FaceServer("127.0.0.1", 0, {}, admin=api).start()
    yield f"http://127.0.0.1:{face.port}", tokens
    face.stop()


def test_the_reminders_endpoint_needs_the_admin_token_and_keeps_owners_apart(server):
    base, tokens = server
    url = f"{base}/admin/api/reminders?owner=tom"
    assert get(url, None)[0] == 401
    assert get(url, tokens["alice"])[0] == 403  # a face token
    status, body = get(url, tokens["root"])
    assert status == 200, body
    shown = {r["text"]: (r["due_local"][11:], r["tz"], r["repeat_words"], r["status"]) for r in body["reminders"]}
    assert shown == {
        "water the basil": ("09:30:00", TZ, "every day", "scheduled"),
        "call my mother": ("18:00:00", TZ, "", "scheduled"),
    }
    assert [(c["text"], c["status"]) for c in body["commitments"]] == [("call the dentist", "open")]
    assert "secret errand" not in json.dumps(body)  # ann's
    assert get(f"{base}/admin/api/reminders?owner=", tokens["root"])[0] == 400
    assert get(f"{base}/admin/api/reminders?owner=nobody", tokens["root"]) == (
        200,
        {"owner": "nobody", "reminders": [], "commitments": []},
    )


def test_without_a_memory_database_the_route_is_absent(tmp_path):
    tokens = write_web_access(tmp_path / "access.yaml", {"root": "admin"})
    api = AdminApi(load_access(tmp_path / "access.yaml"), EditableFiles({}), set())
    face = FaceServer("127.0.0.1", 0, {}, admin=api).start()
    try:
        assert get(f"http://127.0.0.1:{face.port}/admin/api/reminders?owner=tom", tokens["root"])[0] == 404
    finally:
        face.stop()


# -- the panel and its Cancel button: through the memory node, over the web door ----------------


@pytest.fixture
def robot(tmp_path):
    """The memory node on a SQLite database and `fay-ros web --admin --memory-db` over it."""
    with admin_over_memory(str(tmp_path / "memory.db"), tmp_path) as rig:
        yield rig


def reminders(ros, action: str, owner: str, **fields) -> RemindersSrv.Response:
    """The memory node's own memory/reminders (an add is never re-sent: it would add twice)."""
    request = RemindersSrv.Request(action=action, owner=owner, **fields)
    answer = ros.call(RemindersSrv, topics.SRV_REMINDERS, request, timeout=30, resend=action != "add")
    assert answer.success, answer.message
    return answer


@pytest.mark.slow
@needs_chromium
def test_the_panel_lists_the_owners_reminders_and_cancel_cancels_through_the_memory_node(page, robot, ros):
    basil = reminders(
        ros,
        "add",
        "lea",
        tz=TZ,
        start_local=tomorrow_at("09:30"),
        repeat="FREQ=DAILY;BYHOUR=9;BYMINUTE=30",
        text="water the basil",
    ).reminders[0]
    mother = reminders(ros, "add", "lea", tz=TZ, start_local=tomorrow_at("18:00"), text="call my mother").reminders[0]
    reminders(ros, "commit", "lea", text="call the dentist")
    reminders(ros, "add", "max", tz=TZ, start_local=tomorrow_at("08:00"), text="max's errand")

    page.goto(f"{robot['page']}/admin/#token={robot['tokens']['root']}")
    wait_dom(page, "connection", "connected")
    page.fill("#memory-owner", "lea")
    page.click("#reminders-go")
    wait_dom(page, "remindersCount", "2")
    basil_row = page.inner_text(f'tr[data-reminder="{basil.id}"]')
    assert "water the basil" in basil_row and "09:30" in basil_row and "every day" in basil_row, basil_row
    assert "scheduled" in basil_row and TZ in basil_row
    mother_row = page.inner_text(f'tr[data-reminder="{mother.id}"]')
    assert "call my mother" in mother_row and "18:00" in mother_row and "once" in mother_row, mother_row
    assert "call the dentist" in page.inner_text("#commitments")
    assert "errand" not in page.inner_text("#reminders-panel")  # max's

    page.click(f'tr[data-reminder="{mother.id}"] button.cancel-reminder')
    wait_dom(page, "reminderCancel", "cancelled")
    wait_dom(page, "remindersCount", "1")
    assert page.locator(f'tr[data-reminder="{mother.id}"]').count() == 0
    assert f"reminder {mother.id}: cancelled" in page.inner_text("#reminders-status")
    # through the memory node: it holds the reminder as cancelled, the other one untouched
    held = {r.id: r.status for r in reminders(ros, "list", "lea", include_done=True).reminders}
    assert held == {basil.id: "scheduled", mother.id: "cancelled"}
    assert [r.text for r in reminders(ros, "list", "max").reminders] == ["max's errand"]
