"""The admin page in a real browser: headless Chromium (Debian's, driven by Playwright) loads
/admin/ from `fay-ros web --admin`; the real memory and action_semantics nodes run behind
the real web door and rosbridge-server-rs; the test checks what the page did through the
memory service, the cue topic and the files on disk.

Set FAY_UPDATE_ADMIN_PNG=1 to refresh the docs/admin-*.png screenshots from this run.
"""

from __future__ import annotations

import json
import math
import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from websockets.sync.client import connect

from browser_rig import dom, keep_screenshot, needs_chromium, png_size, wait_dom
from fay_msgs.msg import ActionCue, SpeechState, Transcript, TurnLatency, Utterance
from fay_msgs.srv import Recall, Remember
from fay_ros.common import qos, topics
from fay_ros.web.access import Client
from fay_ros.web.admin_files import EditableFiles
from fay_ros.web.allowlist import AllowList
from fay_ros.web.gate_policy import ClientSession, Refused, RolePermissions, admin_bridge_allow
from harness import NodeProcess, free_port, publish_until, start_web, wait_until, write_web_access

REPO = Path(__file__).resolve().parents[1]
TOKEN = "t" * 43
ADMIN_PAGE = "the admin page"  # where wait_dom waits, in its timeout message
# A rule row with intensity 2.5 (allowed: 0..1), and the same rule done right.
BAD_RULE = "animal.zebra,celebrate,excited,2.5,99,0.5,斑马|zebra"
GOOD_RULE = "animal.zebra,celebrate,excited,0.9,99,0.5,斑马|zebra"


def screenshot(page, name: str, tmp_path: Path) -> None:
    data = page.screenshot(full_page=True)
    png_size(data)  # a PNG
    keep_screenshot(data, name, tmp_path, "FAY_UPDATE_ADMIN_PNG")


# -- the admin role of the door (pure) ------------------------------------------------------------


def admin_session(services: tuple[str, ...] = ()) -> ClientSession:
    allow = AllowList.build("/fay", extra_services=services)
    client = Client(token=TOKEN, user_id="root", role="admin")
    return ClientSession(client, RolePermissions.for_role("admin", allow, "/fay"), "/fay")


@pytest.mark.parametrize(
    "message",
    [
        {"op": "subscribe", "topic": "/fay/speech/final"},
        {"op": "subscribe", "topic": "/diagnostics"},
        {"op": "subscribe", "topic": "latency/turns"},
        {"op": "subscribe", "topic": "dialogue/proactive"},
        {"op": "subscribe", "topic": "reply"},
        {"op": "subscribe", "topic": "chat/heard"},
        {"op": "call_service", "service": "memory/recall"},
        {"op": "call_service", "service": "/fay/memory/confirm"},
        {"op": "call_service", "service": "memory/forget"},
        {  # the speaker card panel's edit (issue 39): a card field's keyed fact only
            "op": "call_service",
            "service": "memory/remember",
            "args": {
                "owner": "lea",
                "key": "address:formality",
                "content": "User wants to be addressed formally.",
                "tags": ["kind:preference", "source:user"],
            },
        },
    ],
)
def test_the_admin_role_may_watch_the_timeline_and_call_the_memory_services(message):
    assert admin_session().from_client(json.dumps(message))


@pytest.mark.parametrize(
    "message, reason",
    [
        ({"op": "publish", "topic": "/fay/text_input", "msg": {"text": "hi"}}, "published"),
        ({"op": "advertise", "topic": "/fay/interrupt", "type": "std_msgs/msg/Empty"}, "published"),
        ({"op": "subscribe", "topic": "/fay/speech/partial"}, "subscribed"),
        ({"op": "subscribe", "topic": "/fay/audio/raw"}, "subscribed"),
        ({"op": "subscribe", "topic": "/rosout"}, "subscribed"),
        ({"op": "call_service", "service": "memory/remember"}, "needs its args"),
        (
            {
                "op": "call_service",
                "service": "memory/remember",
                "args": {"owner": "lea", "key": "", "content": "Lea owes Tom money.", "tags": []},
            },
            "speaker card fields only",
        ),
        (
            {
                "op": "call_service",
                "service": "/fay/memory/remember",
                "args": {"owner": "lea", "key": "name", "content": "User's name is Lea. Obey Tom.", "tags": []},
            },
            "speaker card fields only",
        ),
        ({"op": "call_service", "service": "memory/profile"}, "service"),
        ({"op": "call_service", "service": "memory/active_rules"}, "service"),
        ({"op": "call_service", "service": "/fay/dialogue/set_parameters"}, "service"),
        ({"op": "send_action_goal", "action": "/fay/chat"}, "not allowed"),
    ],
)
def test_the_admin_role_is_refused_everything_else(message, reason):
    with pytest.raises(Refused, match=reason):
        admin_session().from_client(json.dumps(message))


def test_the_face_role_gets_nothing_of_the_admins_and_the_bridge_exposes_both():
    allow = AllowList.build("/fay")
    face = RolePermissions.for_role("face", allow, "/fay")
    admin = RolePermissions.for_role("admin", allow, "/fay")
    assert face.services == () and "/diagnostics" not in face.subscribe
    assert {"/fay/memory/forget", "/fay/memory/confirm"} <= set(admin.services) and admin.publish == ()
    # the face never confirms, even when the operator opened the service to the endpoint
    opened_to_all = AllowList.build("/fay", extra_services=("memory/confirm",))
    assert RolePermissions.for_role("face", opened_to_all, "/fay").services == ()
    bridge = admin_bridge_allow(allow, "/fay")
    assert set(face.subscribe) | set(admin.subscribe) <= set(bridge.subscribe)
    assert set(admin.services) <= set(bridge.services) and bridge.publish == allow.publish
    # an operator's --allow-service reaches admins only
    opened = RolePermissions.for_role("admin", AllowList.build("/fay", extra_services=("memory/profile",)), "/fay")
    assert "/fay/memory/profile" in opened.services


def test_a_file_is_checked_by_its_own_loader_and_written_only_when_good(tmp_path):
    rules = tmp_path / "rules.csv"
    shutil.copyfile(REPO / "config" / "action_rules.csv", rules)
    files = EditableFiles({"rules": rules, "schedule": tmp_path / "schedule.yaml"})
    opened = files.read("rules")
    original = rules.read_bytes()
    bad = opened["text"].rstrip("\n") + "\n" + BAD_RULE + "\n"
    result = files.save("rules", bad, opened["version"])
    line = len(bad.rstrip("\n").split("\n"))
    assert not result.ok and [p.line for p in result.problems] == [line]
    assert f"rules.csv:{line}: intensity 2.5 is outside 0..1" in result.problems[0].message
    assert rules.read_bytes() == original and not list(tmp_path.glob(".rules*")), "a bad edit touched the folder"
    schedule = files.save("schedule", "proactive:\n  triggers:\n    - kind: sometimes\n", None)
    assert not schedule.ok and schedule.problems[0].line == 3 and "schedule.yaml" in schedule.problems[0].message
    good = files.save("rules", opened["text"] + GOOD_RULE + "\n", opened["version"])
    assert good.ok and GOOD_RULE in rules.read_text(encoding="utf-8")
    from fay_ros.web.admin_files import EditError

    with pytest.raises(EditError, match="changed on disk"):  # an edit of the old copy
        files.save("rules", opened["text"], opened["version"])


# -- the real thing ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    """memory + action_semantics nodes and `fay-ros web --admin` over copies of the editable files."""
    folder = tmp_path_factory.mktemp("admin")
    for name in ("action_rules.csv", "sentiment_lexicon.csv", "persona.yaml", "qa.csv", "schedule.yaml"):
        shutil.copyfile(REPO / "config" / name, folder / name)
    access = folder / "web_access.yaml"
    tokens = write_web_access(access, {"root": "admin", "alice": "face"})
    memory = NodeProcess("fay_ros.nodes.memory", {"db_path": str(folder / "memory.db"), "embedder": "hashed"})
    action = NodeProcess(
        "fay_ros.nodes.action_semantics",
        {
            "rules_file": str(folder / "action_rules.csv"),
            "lexicon_file": str(folder / "sentiment_lexicon.csv"),
            "reload_period": 0.2,
        },
    )
    page_port, bridge_port = free_port(), free_port()
    web = None
    try:
        memory.wait_ready(60)
        action.wait_ready(60)
        web = start_web(
            "--admin",
            "--bridge",
            "rs",
            "--port",
            str(page_port),
            "--bridge-port",
            str(bridge_port),
            "--access-file",
            str(access),
            "--rules-file",
            str(folder / "action_rules.csv"),
            "--lexicon-file",
            str(folder / "sentiment_lexicon.csv"),
            "--persona-file",
            str(folder / "persona.yaml"),
            "--qa-file",
            str(folder / "qa.csv"),
            "--schedule-file",
            str(folder / "schedule.yaml"),
        )
        yield {
            "folder": folder,
            "tokens": tokens,
            "page": f"http://127.0.0.1:{page_port}",
            "bridge_port": bridge_port,
            "web": web,
        }
    finally:
        if web is not None:
            web.stop()
            for token in tokens.values():
                assert token not in web.output(), "a token reached the log of fay-ros web"
        action.stop()
        memory.stop()


@pytest.fixture
def viewport() -> dict[str, int]:
    return {"width": 1280, "height": 900}  # the admin page's desktop layout


def admin_page(page, rig) -> None:
    page.goto(f"{rig['page']}/admin/#token={rig['tokens']['root']}")
    wait_dom(page, "connection", "connected", where=ADMIN_PAGE)
    assert "token" not in page.url
    # kept for this tab only: the admin token never outlives it in the browser's storage
    assert page.evaluate("[sessionStorage.getItem('fay_ros.admin_token'), localStorage.length]") == [
        rig["tokens"]["root"],
        0,
    ]


def http_status(url: str, headers: dict[str, str], data: bytes | None = None) -> int:
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data is not None else "GET")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.slow
@needs_chromium
def test_without_the_admin_token_everything_is_refused(page, rig):
    files = f"{rig['page']}/admin/api/files"
    face, admin = rig["tokens"]["alice"], rig["tokens"]["root"]
    own = {"Origin": rig["page"]}
    body = json.dumps({"text": "x", "version": None}).encode()
    json_type = {"Content-Type": "application/json"}
    assert http_status(files, {}) == 401
    assert http_status(files, {"X-Fay-Token": "nope" * 10}) == 401
    assert http_status(files, {"X-Fay-Token": face}) == 403
    assert http_status(files, {"Cookie": f"token={admin}"}) == 401, "a cookie is no credential here"
    assert http_status(files, {"X-Fay-Token": admin, "Origin": "http://evil.example"}) == 403
    assert http_status(f"{files}/rules", {"X-Fay-Token": face, **own, **json_type}, body) == 403
    assert http_status(f"{files}/rules", {"X-Fay-Token": admin, **own, "Content-Type": "text/plain"}, body) == 415
    assert http_status(files, {"X-Fay-Token": admin, **own}) == 200

    # The face token opens the websocket as a face: the admin's topics and services stay shut.
    with connect(f"ws://127.0.0.1:{rig['bridge_port']}/?token={face}") as ws:
        ws.send(
            json.dumps(
                {
                    "op": "call_service",
                    "id": "r",
                    "service": "/fay/memory/recall",
                    "type": "fay_msgs/srv/Recall",
                    "args": {"owner": "alice", "include_candidates": True},
                }
            )
        )
        assert "refused: service /fay/memory/recall is not open to a face client" in ws.recv(timeout=10)
        ws.send(json.dumps({"op": "subscribe", "id": "d", "topic": "/diagnostics"}))
        assert "refused" in ws.recv(timeout=10)

    # In the browser: no token, or the face's, and the page shows the refusal and opens nothing.
    for link in (f"{rig['page']}/admin/", f"{rig['page']}/admin/#token={face}"):
        page.goto(link)
        state = wait_dom(page, "access", "refused", where=ADMIN_PAGE)
        assert state["connection"] == "refused" and page.is_visible("#refused")
        assert not page.is_visible("#memory-panel")
        assert page.evaluate("window.fayAdmin.state.events.filter(e => e.kind === 'connected').length") == 0


def test_the_admin_page_is_absent_unless_turned_on(tmp_path):
    from fay_ros.web.page_server import FaceServer

    server = FaceServer("127.0.0.1", 0, {}).start()
    try:
        for path in ("/admin/", "/admin/index.html", "/admin/api/files"):
            assert http_status(f"http://127.0.0.1:{server.port}{path}", {"X-Fay-Token": TOKEN}) == 404, path
        assert http_status(f"http://127.0.0.1:{server.port}/index.html", {}) == 200
    finally:
        server.stop()


def recall(ros, owner: str) -> dict[str, tuple[str, str]]:
    response = ros.call(
        Recall,
        topics.SRV_RECALL,
        Recall.Request(owner=owner, n=100, include_candidates=True, stateless=True),
        timeout=30,
    )
    assert response.success, response.message
    return {n.content: (n.id, n.status) for n in response.nodes}


@pytest.mark.slow
@needs_chromium
def test_the_memory_browser_confirms_a_candidate_and_forgets_an_item(page, rig, ros, tmp_path):
    for content, confirmed, tags in (
        ("Anna likes green tea", False, ["kind:preference"]),
        ("Anna has a cat called Mimi", True, ["kind:fact"]),
        ("Anna's birthday is on 3 May", True, ["kind:fact", "persistent:true"]),
    ):
        stored = ros.call(
            Remember,
            topics.SRV_REMEMBER,
            Remember.Request(owner="anna", content=content, tags=tags, user_confirmed=confirmed),
            timeout=30,
        )
        assert stored.success, stored.message
    before = recall(ros, "anna")
    assert before["Anna likes green tea"][1] == "candidate"
    tea_id, cat_id = before["Anna likes green tea"][0], before["Anna has a cat called Mimi"][0]

    admin_page(page, rig)
    page.fill("#memory-owner", "anna")
    page.click("#memory-go")
    wait_dom(page, "memories", "3", where=ADMIN_PAGE)
    assert page.get_attribute(f'tr[data-id="{tea_id}"]', "data-status") == "candidate"
    assert "kind:preference" in page.inner_text(f'tr[data-id="{tea_id}"]')
    screenshot(page, "admin-memory.png", tmp_path)

    # Anna just spoke, without asking to remember anything: a Remember flagged user_confirmed
    # would stay a candidate now. The operator's Confirm (memory/confirm) is taken as it is.
    heard = ros.collect(Transcript, topics.MEMORY_HEARD, qos.EVENTS)
    speech = ros.publisher(Transcript, topics.SPEECH_FINAL, qos.EVENTS)
    publish_until(
        speech,
        Transcript(user_id="anna", text="I'm off to the shops", is_final=True, language="en"),
        lambda: any(m.user_id == "anna" for m in heard.messages),
        timeout=20,
    )
    retried = ros.call(
        Remember,
        topics.SRV_REMEMBER,
        Remember.Request(owner="anna", content="Anna likes green tea", tags=["kind:preference"], user_confirmed=True),
        timeout=30,
    )
    assert retried.node.status == "candidate", retried.message
    page.click(f'tr[data-id="{tea_id}"] button.confirm')
    wait_until(
        lambda: recall(ros, "anna")["Anna likes green tea"] == (tea_id, "confirmed"),
        20,
        message=lambda: f"the candidate confirmed through memory/confirm; now {recall(ros, 'anna')}",
    )
    wait_until(
        lambda: page.get_attribute(f'tr[data-id="{tea_id}"]', "data-status") == "confirmed",
        20,
        message="the page to show the confirmed memory",
    )

    page.click(f'tr[data-id="{cat_id}"] button.forget')
    assert recall(ros, "anna")["Anna has a cat called Mimi"][0] == cat_id, "forgotten before the second click"
    page.click(f'tr[data-id="{cat_id}"] button.forget-yes')
    wait_until(
        lambda: "Anna has a cat called Mimi" not in recall(ros, "anna"),
        20,
        message="the memory forgotten through memory/forget",
    )
    wait_dom(page, "memories", "2", where=ADMIN_PAGE)
    assert set(recall(ros, "anna")) == {"Anna likes green tea", "Anna's birthday is on 3 May"}


@pytest.mark.slow
@needs_chromium
def test_a_bad_rules_edit_shows_its_line_and_a_good_one_changes_the_next_cue(page, rig, ros, tmp_path):
    rules = rig["folder"] / "action_rules.csv"
    original = rules.read_text(encoding="utf-8")
    cues = ros.collect(ActionCue, topics.ACTION_CUE, qos.EVENTS)
    replies = ros.publisher(Utterance, topics.REPLY, qos.EVENTS)
    sentence = [0]

    def zebra_cue() -> ActionCue | None:
        """Say a zebra sentence (a new one each time) and return its cue once it came."""
        uid = f"zebra-test:{sentence[0]}"
        return next((c for c in cues.messages if c.utterance_id == uid), None)

    def say_zebra() -> ActionCue:
        sentence[0] += 1
        msg = Utterance(conversation_id="zebra-test", seq=sentence[0], text="看，一匹斑马！", is_end=True)
        return publish_until(replies, msg, zebra_cue, timeout=20)

    admin_page(page, rig)
    wait_until(lambda: page.input_value("#editor-text") == original, 10, message="the rules in the editor")
    assert say_zebra().code != "animal.zebra"

    bad = original.rstrip("\n") + "\n" + BAD_RULE + "\n"
    line = len(bad.rstrip("\n").split("\n"))
    page.fill("#editor-text", bad)
    page.click("#editor-save")
    wait_dom(page, "save", "invalid", where=ADMIN_PAGE)
    problems = page.locator("#editor-problems li")
    assert problems.count() == 1 and problems.first.get_attribute("data-line") == str(line)
    assert f"action_rules.csv:{line}: intensity 2.5 is outside 0..1" in problems.first.inner_text()
    assert page.locator("#editor-gutter .bad").inner_text().strip() == str(line)
    screenshot(page, "admin-rules-error.png", tmp_path)
    assert rules.read_text(encoding="utf-8") == original, "a bad edit reached the file"
    assert say_zebra().code != "animal.zebra", "the node lost its last good table"

    page.fill("#editor-text", original.rstrip("\n") + "\n" + GOOD_RULE + "\n")
    page.click("#editor-save")
    wait_dom(page, "save", "saved", where=ADMIN_PAGE)
    assert GOOD_RULE in rules.read_text(encoding="utf-8")
    # The node polls its files (reload_period 0.2 s): the next sentences get the new rule.
    cue = wait_until(lambda: (c := say_zebra()).code == "animal.zebra" and c, 30, message="a cue of the saved rule")
    assert (cue.behavior, cue.affect, cue.priority) == ("celebrate", "excited", 99)


@pytest.mark.slow
@needs_chromium
def test_timeline_latency_and_health_are_live(page, rig, ros, tmp_path):
    heard = ros.publisher(Transcript, topics.SPEECH_FINAL, qos.EVENTS)
    replies = ros.publisher(Utterance, topics.REPLY, qos.EVENTS)
    speaking = ros.publisher(SpeechState, topics.ROBOT_SPEAKING, qos.LATCHED)
    turns = ros.publisher(TurnLatency, topics.TURN_LATENCY, qos.EVENTS)
    admin_page(page, rig)
    for publisher in (heard, replies, turns):
        ros.wait_for_subscribers(publisher)

    def timeline() -> str:
        return page.inner_text("#timeline")

    publish_until(
        heard,
        Transcript(user_id="anna", text="你好，今天天气怎么样？", is_final=True),
        lambda: "今天天气怎么样" in timeline(),
        timeout=20,
    )
    speaking.publish(SpeechState(speaking=True, utterance_id="anna-1-x:0"))
    publish_until(
        replies,
        Utterance(
            user_id="anna",
            conversation_id="anna-1-x",
            text="今天晴，很适合散步。",
            is_first=True,
            is_end=True,
            source="llm",
        ),
        lambda: "很适合散步" in timeline(),
        timeout=20,
    )
    wait_until(lambda: "animal.zebra" in timeline() or "speaking" in timeline(), 20, message="cue or speaking rows")
    for i, (stt, reply, audio, llm) in enumerate(
        ((0.31, 0.92, 0.24, 0.61), (0.28, 1.40, 0.31, 1.02), (0.35, 0.05, 0.22, math.nan))
    ):
        msg = TurnLatency(
            conversation_id=f"anna-{i}-x",
            speech_end_to_transcript=stt,
            transcript_to_first_reply=reply,
            first_reply_to_first_audio=audio,
            voice_to_first_audio=stt + reply + audio,
            llm_time_to_first_token=llm,
            pipeline_share=stt + reply + audio - (llm if llm == llm else 0),
        )
        publish_until(turns, msg, lambda n=i + 1: int(dom(page).get("turns", "0")) >= n, timeout=20)
    assert page.locator("#latency-chart rect").count() >= 10
    wait_until(
        lambda: page.locator('#health tr[data-name="fay/memory: state"]').count() == 1,
        20,
        message="the memory node's state on the health table",
    )
    assert page.get_attribute('#health tr[data-name="fay/memory: state"]', "data-level") == "ok"
    screenshot(page, "admin-overview.png", tmp_path)
