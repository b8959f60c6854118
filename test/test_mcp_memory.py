"""`fay-ros mcp`, the MCP memory server, between real processes: the memory node, the server as
a subprocess (stdio and streamable HTTP), and the official MCP SDK's client in the test.

What is checked through the memory node's own services (the probe), not through the server
under test: that a write landed under the bound owner, and that another owner's memory was
neither read nor written.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from fay_msgs.msg import Transcript
from fay_msgs.srv import Recall, Remember
from fay_msgs.srv import Reminders as RemindersSrv
from fay_ros.common import qos, topics
from fay_ros.memory.model import describe_schema
from harness import NodeProcess, RosProbe, free_port, ros_environment, wait_until, write_web_access

SEVEN = {
    "memory_remember",
    "memory_search",
    "memory_get_recent",
    "memory_get_active_rules",
    "memory_get_reflections",
    "memory_get_user_profile",
    "memory_get_schema",
}
REMINDER_TOOLS = {"reminder_list", "reminder_add", "reminder_cancel"}
KNOWLEDGE_TOOLS = {"knowledge_search"}  # shared documents, no owner (test_knowledge_e2e)
TOOLS = SEVEN | REMINDER_TOOLS | KNOWLEDGE_TOOLS


@pytest.fixture(scope="module")
def probe():
    p = RosProbe("mcp_test_probe")
    yield p
    p.close()


@pytest.fixture(scope="module")
def memory(probe, tmp_path_factory):
    db = tmp_path_factory.mktemp("mcp_memory") / "memory.db"
    proc = NodeProcess("fay_ros.nodes.memory", {"db_path": str(db), "embedder": "hashed"})
    try:
        proc.wait_ready(timeout=40, probe=probe)
        yield proc
    finally:
        proc.stop()


def recall(probe: RosProbe, owner: str, query: str = "", **fields: Any) -> list[Any]:
    """The owner's memories as the memory node itself answers (candidates included)."""
    response = probe.call(
        Recall,
        topics.SRV_RECALL,
        Recall.Request(owner=owner, query=query, n=100, include_candidates=True, stateless=True, **fields),
        timeout=20,
    )
    assert response.success, response.message
    return list(response.nodes)


@contextlib.asynccontextmanager
async def stdio_session(owner: str | None, *extra: str) -> AsyncIterator[ClientSession]:
    args = ["-m", "fay_ros.cli", "mcp", *(["--owner", owner] if owner is not None else []), *extra]
    params = StdioServerParameters(command=sys.executable, args=args, env=ros_environment())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@contextlib.asynccontextmanager
async def http_session(port: int, token: str) -> AsyncIterator[ClientSession]:
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    async with (
        client,
        streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=client) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        yield session


async def call(session: ClientSession, name: str, **args: Any) -> tuple[Any, bool]:
    """(structured result or the error text, is_error)."""
    result = await session.call_tool(name, args or None)  # no arguments: none sent, as clients do
    text = result.content[0].text if result.content else ""
    return (text if result.is_error else json.loads(text)), bool(result.is_error)


def test_lists_the_memory_and_reminder_tools_with_closed_schemas_and_no_owner_argument(memory):
    async def run() -> list[Any]:
        async with stdio_session("tom") as session:
            return list((await session.list_tools()).tools)

    tools = {t.name: t for t in asyncio.run(run())}
    assert set(tools) == TOOLS
    for tool in tools.values():
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False, tool.name
        assert not {"owner", "user", "user_id", "username"} & set(schema["properties"]), tool.name
        assert tool.name in KNOWLEDGE_TOOLS or "bound by the server" in (tool.description or ""), tool.name
    remember = tools["memory_remember"].input_schema
    assert remember["required"] == ["content"]
    assert "rule" in remember["properties"]["kind"]["enum"]
    assert tools["reminder_add"].input_schema["required"] == ["when", "what"]
    assert tools["reminder_cancel"].input_schema["required"] == ["id"]
    assert set(tools["memory_search"].input_schema["properties"]) >= {
        "query",
        "n",
        "tags_all",
        "tags_any",
        "include_candidates",
        "evidence",
    }


def test_remember_and_search_round_trip_for_the_bound_owner(memory, probe):
    async def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with stdio_session("tom") as session:
            out["stored"] = await call(
                session,
                "memory_remember",
                content="Tom's breakout strategy needs an ATR filter",
                kind="decision",
                source="claude_code",
                extra_tags=["domain:quant"],
            )
            out["hidden"] = await call(session, "memory_search", query="breakout strategy ATR filter")
            out["review"] = await call(
                session,
                "memory_search",
                query="breakout strategy ATR filter",
                include_candidates=True,
                tags_all=["domain:quant"],
            )
            out["schema"] = await call(session, "memory_get_schema")
        async with stdio_session("tom", "--confirmed-writes") as session:
            out["rule"] = await call(
                session,
                "memory_remember",
                content="Check every stop order at the full hour",
                kind="rule",
                source="family_app",
            )
            out["rules"] = await call(session, "memory_get_active_rules")
            out["recent"] = await call(session, "memory_get_recent", n=2)
            out["profile"] = await call(session, "memory_get_user_profile")
            out["reflections"] = await call(session, "memory_get_reflections")
        return out

    out = asyncio.run(run())
    stored, failed = out["stored"]
    assert not failed, stored
    # an MCP client is an agent, not the user speaking: a candidate by default
    assert stored["status"] == "candidate"
    assert set(stored["tags"]) >= {"kind:decision", "source:claude_code", "domain:quant"}
    assert out["hidden"] == ({"memories": []}, False)  # candidates are not answers
    review, failed = out["review"]
    assert not failed and [m["id"] for m in review["memories"]] == [stored["id"]]
    assert review["memories"][0]["status"] == "candidate"
    assert out["schema"] == (json.loads(json.dumps(describe_schema())), False)
    # the memory node has it under tom
    assert stored["id"] in {n.id for n in recall(probe, "tom")}

    rule, failed = out["rule"]
    assert not failed and rule["status"] == "confirmed", rule  # nothing heard from tom: the flag is trusted
    assert "persistent:true" in rule["tags"]
    assert [r["id"] for r in out["rules"][0]["rules"]] == [rule["id"]]
    recent, failed = out["recent"]
    assert not failed and recent["memories"][0]["id"] == rule["id"]  # newest first; the candidate is left out
    assert [m["id"] for m in recent["memories"]] == [rule["id"]]
    assert out["profile"][1] is False and set(out["profile"][0]) == {"portrait", "facts", "pending_evidence", "updated"}
    assert out["reflections"] == ({"memories": []}, False)


def test_a_tool_call_naming_another_owner_neither_reads_nor_writes_that_owner(memory, probe):
    secret = probe.call(
        Remember,
        topics.SRV_REMEMBER,
        Remember.Request(owner="alice", content="Alice's door code is 4711", user_confirmed=True, tags=["kind:fact"]),
        timeout=20,
    )
    assert secret.success, secret.message

    async def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with stdio_session("mallory") as session:
            out["write_owner"] = await call(
                session, "memory_remember", content="alice owes mallory money", owner="alice"
            )
            out["write_username"] = await call(
                session, "memory_remember", content="alice owes mallory money", username="alice"
            )
            out["read_user"] = await call(session, "memory_search", query="door code", user="alice")
            out["read_user_id"] = await call(session, "memory_get_recent", user_id="alice")
            out["read"] = await call(session, "memory_search", query="Alice's door code")
            out["unknown"] = await call(session, "memory_search", query="door code", who="alice")
        async with stdio_session("") as session:
            out["guest"] = await call(session, "memory_search", query="door code")
            out["guest_schema"] = await call(session, "memory_get_schema")
        return out

    out = asyncio.run(run())
    for key in ("write_owner", "write_username", "read_user", "read_user_id"):
        text, failed = out[key]
        assert failed and "refused" in text and "bound by the server" in text, (key, text)
    assert out["read"] == ({"memories": []}, False)
    text, failed = out["unknown"]
    assert failed and "who" in text
    text, failed = out["guest"]
    assert failed and "guest" in text
    assert out["guest_schema"][1] is False
    # alice's memory is untouched, and nothing was written for anyone by the refused calls
    assert [n.content for n in recall(probe, "alice")] == ["Alice's door code is 4711"]
    assert recall(probe, "mallory") == []
    assert not [n for n in recall(probe, "alice", "mallory money") if "mallory" in n.content]


def test_search_in_evidence_mode_returns_heard_turns_with_date_and_sources(memory, probe):
    """memory_search with evidence: true is the memory node's memory/search_evidence: a turn the
    node heard comes back with its absolute date and its turn id as its source."""
    speech = probe.publisher(Transcript, topics.SPEECH_FINAL, qos.EVENTS)
    heard = probe.collect(Transcript, topics.MEMORY_HEARD, qos.EVENTS)
    probe.wait_for_subscribers(speech)
    wait_until(lambda: heard.subscription.get_publisher_count() >= 1, message="memory/heard matched")
    speech.publish(Transcript(user_id="tess", text="Yesterday I went hiking on Mount Tai", is_final=True))
    heard.wait_for_count(1)

    async def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with stdio_session("tess") as session:
            out["evidence"] = await call(session, "memory_search", query="when did I go hiking", evidence=True)
            out["plain"] = await call(session, "memory_search", query="when did I go hiking")
            out["mixed"] = await call(session, "memory_search", query="hiking", evidence=True, tags_all=["kind:fact"])
        async with stdio_session("tess-other") as session:
            out["other"] = await call(session, "memory_search", query="when did I go hiking", evidence=True)
        async with stdio_session("") as session:
            out["guest"] = await call(session, "memory_search", query="hiking", evidence=True)
        return out

    out = asyncio.run(run())
    body, failed = out["evidence"]
    assert not failed, body
    turns = [e for e in body["evidence"] if e["kind"] == "turn"]
    assert [e["text"] for e in turns] == ["Yesterday I went hiking on Mount Tai"], body
    turn = turns[0]
    assert turn["sources"] == [turn["id"]] and turn["id"].endswith(":1") and turn["speaker"] == "user"
    # "yesterday" resolved to an absolute day, the day before it was said
    assert turn["date"] < turn["said"] and turn["rendered"].startswith(f"[{turn['date']}] (said {turn['said']})")
    assert "memories" in out["plain"][0]  # without evidence: the memory search as before
    text, failed = out["mixed"]
    assert failed and "tags_all cannot be used with evidence" in text
    assert out["other"] == ({"evidence": []}, False)  # another owner's turns are not theirs
    text, failed = out["guest"]
    assert failed and "guest" in text


def reminders_of(probe: RosProbe, owner: str) -> list[Any]:
    """The owner's active reminders as the memory node itself answers."""
    response = probe.call(
        RemindersSrv, topics.SRV_REMINDERS, RemindersSrv.Request(action="list", owner=owner), timeout=20
    )
    assert response.success, response.message
    return list(response.reminders)


def test_reminder_tools_add_list_cancel_for_the_bound_owner_in_the_schedules_zone(memory, probe, tmp_path):
    schedule = tmp_path / "schedule.yaml"
    schedule.write_text("timezone: Asia/Shanghai\n", encoding="utf-8")

    async def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with stdio_session("tom", "--schedule-file", str(schedule)) as session:
            out["daily"] = await call(session, "reminder_add", when="every day at 9:30", what="water the basil")
            out["soon"] = await call(session, "reminder_add", when="in 20 minutes", what="stretch")
            out["as_alice"] = await call(session, "reminder_add", when="in 20 minutes", what="x", owner="alice")
            out["no_time"] = await call(session, "reminder_add", when="tomorrow", what="call mum")
            out["vague"] = await call(session, "reminder_add", when="later", what="call mum")
            out["listed"] = await call(session, "reminder_list")
            daily = out["daily"][0]["reminder"]["id"] if not out["daily"][1] else ""
            out["cancelled"] = await call(session, "reminder_cancel", id=daily)
            out["again"] = await call(session, "reminder_cancel", id=daily)
            out["after"] = await call(session, "reminder_list")
        async with stdio_session("") as session:
            out["guest"] = await call(session, "reminder_list")
        async with stdio_session("alice") as session:
            out["alice_cancels"] = await call(session, "reminder_cancel", id=out["soon"][0]["reminder"]["id"])
        return out

    out = asyncio.run(run())
    daily, failed = out["daily"]
    assert not failed, daily
    view = daily["reminder"]
    assert view["tz"] == "Asia/Shanghai" and view["due_local"].endswith("T09:30:00"), view
    assert view["repeat"] == "FREQ=DAILY;BYHOUR=9;BYMINUTE=30" and view["repeat_words"] == "every day"
    assert not out["soon"][1], out["soon"]
    for refused, says in (("as_alice", "refused"), ("no_time", "no time of day"), ("vague", "vague")):
        text, failed = out[refused]
        assert failed and says in text, (refused, text)
    listed, failed = out["listed"]
    assert not failed and sorted(r["text"] for r in listed["reminders"]) == ["stretch", "water the basil"], listed
    cancelled, failed = out["cancelled"]
    assert not failed and cancelled["ok"] and cancelled["reminder"]["id"] == view["id"], cancelled
    assert out["again"][1] and "not cancelled" in out["again"][0]
    assert [r["text"] for r in out["after"][0]["reminders"]] == ["stretch"]
    text, failed = out["guest"]
    assert failed and "guest" in text
    assert out["alice_cancels"][1], "another owner's id is not theirs to cancel"
    # what the memory node itself holds: tom's one reminder, nothing for alice
    assert [(r.text, r.tz) for r in reminders_of(probe, "tom")] == [("stretch", "Asia/Shanghai")]
    assert reminders_of(probe, "alice") == []


def _post_status(port: int, token: str | None) -> int:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp",
        method="POST",
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode(),
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **({"Authorization": f"Bearer {token}"} if token is not None else {}),
        },
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


@pytest.fixture(scope="module")
def http_server(memory, tmp_path_factory):
    access = tmp_path_factory.mktemp("mcp_access") / "mcp_access.yaml"
    tokens = write_web_access(access, {"tom": "face", "": "face"})
    port = free_port()
    proc = NodeProcess(
        "fay_ros.cli",
        args=["mcp", "--http", "--port", str(port), "--access-file", str(access)],
        ros=False,
        ready=lambda: _post_status(port, None) == 401,
    )
    try:
        proc.wait_ready(timeout=40)
        yield port, tokens, proc
    finally:
        proc.stop()


def test_http_refuses_a_missing_or_wrong_token(http_server):
    port, tokens, proc = http_server
    assert _post_status(port, None) == 401
    assert _post_status(port, "x" * 43) == 401
    assert _post_status(port, tokens["tom"] + "x") == 401
    assert _post_status(port, "") == 401
    assert tokens["tom"] not in proc.output()  # the secret never reaches the log


def test_http_token_binds_its_owner(http_server, probe):
    port, tokens, proc = http_server

    async def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with http_session(port, tokens["tom"]) as session:
            out["tools"] = {t.name for t in (await session.list_tools()).tools}
            out["stored"] = await call(
                session, "memory_remember", content="Tom waters the basil on Sundays", kind="event", source="garden_app"
            )
            out["as_alice"] = await call(
                session, "memory_remember", content="Tom waters the basil on Sundays", owner="alice"
            )
            out["found"] = await call(session, "memory_search", query="basil", include_candidates=True)
        async with http_session(port, tokens[""]) as session:
            out["guest"] = await call(session, "memory_get_recent")
        return out

    out = asyncio.run(run())
    assert out["tools"] == TOOLS
    stored, failed = out["stored"]
    assert not failed, stored
    assert failed is False and out["as_alice"][1] is True
    assert stored["id"] in [m["id"] for m in out["found"][0]["memories"]]
    assert stored["id"] in {n.id for n in recall(probe, "tom")}
    assert not [n for n in recall(probe, "alice") if "basil" in n.content]
    text, failed = out["guest"]
    assert failed and "guest" in text
    # the log names tools and outcomes, never memory content or tokens
    assert "tool memory_remember: ok" in proc.output()
    assert "basil" not in proc.output() and tokens["tom"] not in proc.output()


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--http", "--host", "0.0.0.0"], "not a loopback address"),
        (["--http", "--owner", "tom"], "--owner is for stdio"),
    ],
)
def test_refused_configurations_exit_2_with_the_reason(tmp_path, argv, says):
    access = tmp_path / "mcp_access.yaml"
    write_web_access(access, {"tom": "face"})
    proc = NodeProcess("fay_ros.cli", args=["mcp", *argv, "--access-file", str(access)], ros=False)
    assert proc.wait_exit(30) == 2
    assert says in proc.output()


def test_a_readable_access_file_is_refused(tmp_path):
    access = tmp_path / "mcp_access.yaml"
    write_web_access(access, {"tom": "face"})
    access.chmod(0o644)
    proc = NodeProcess("fay_ros.cli", args=["mcp", "--http", "--access-file", str(access)], ros=False)
    assert proc.wait_exit(30) == 2
    assert "readable by other users" in proc.output() and str(access) in proc.output()


def test_add_client_writes_a_private_access_file_and_prints_the_token_once(tmp_path):
    from fay_ros.web.access import load

    access = tmp_path / "config" / "mcp_access.yaml"
    proc = NodeProcess("fay_ros.cli", args=["mcp", "--add-client", "tom", "--access-file", str(access)], ros=False)
    assert proc.wait_exit(30) == 0, proc.output()
    assert access.stat().st_mode & 0o777 == 0o600
    clients = load(access).clients
    assert [c.user_id for c in clients] == ["tom"]
    assert proc.output().strip().splitlines()[-1] == clients[0].token
