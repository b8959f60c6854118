"""The MCP client: MCP servers' allow-listed tools become agent tools.

The server is a real MCP server written with the official SDK (test/procs/mcp_echo_server.py),
over stdio (a child process of the client) and over streamable HTTP on loopback (its own
process, with a token header the client reads from an environment variable by name). The
end-to-end test runs the dialogue node against the scripted loopback LLM, which asks for an
MCP tool and answers with what the tool returned.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

import dialogue_fake_llm as fake
import psutil_free_children as children
from fay_msgs.msg import Transcript, Utterance
from fay_ros.agent.mcp_client import McpClient, McpClientError, McpToolRefused, McpUnavailable, result_text
from fay_ros.agent.mcp_config import McpConfigError, McpServersFile
from fay_ros.agent.tool_config import load_tools_file
from fay_ros.common import topics
from fay_ros.dialogue.engine import DialogueEngine, EngineSettings
from fay_ros.dialogue.persona import Persona, PrestartSpec
from fay_ros.dialogue.tools import ToolContext, ToolError, ToolRegistry
from fay_ros.llm.client import ChatClient, Endpoint
from harness import NodeProcess, RosProbe, wait_until, write_tools_file

REPO = Path(__file__).resolve().parents[1]
SERVER = REPO / "test" / "procs" / "mcp_echo_server.py"
ALLOWED = ["echo", "add", "slow", "pid", "crash"]
TOKEN_ENV = "FAY_TEST_MCP_TOKEN"


def stdio_servers(**overrides: Any) -> McpServersFile:
    server = {
        "name": "echo",
        "command": sys.executable,
        "args": [str(SERVER)],
        "tools": ALLOWED,
        "start_timeout": 20,
        "call_timeout": 5,
        "restart_backoff": 0.05,
        **overrides,
    }
    return McpServersFile.model_validate({"servers": [server]})


def mcp_children() -> list[int]:
    """Live child processes of this test process running the stdio echo server."""
    found = []
    for pid in children.of(os.getpid()):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if str(SERVER).encode() in argv and b"--http" not in argv and children.alive(pid):
            found.append(pid)
    return found


def run(coro_fn: Any, servers: McpServersFile, **kwargs: Any) -> Any:
    """Run `coro_fn(client)` on a fresh loop; the client is always closed afterwards."""

    async def main() -> Any:
        client = McpClient(servers, **kwargs)
        try:
            return await coro_fn(client)
        finally:
            await client.close()

    return asyncio.run(main())


# -- configuration ------------------------------------------------------------------------


def test_the_example_file_is_valid():
    servers = load_tools_file(REPO / "config" / "tools.example.yaml").mcp
    assert [(s.name, s.kind) for s in servers.servers] == [("files", "stdio"), ("weather", "streamable_http")]
    assert servers.servers[0].tool_names() == {
        "read_text_file": "mcp_files_read_text_file",
        "list_directory": "mcp_files_list_directory",
    }
    assert servers.servers[1].tool_names() == {"forecast": "forecast"}  # prefix ""


@pytest.mark.parametrize(
    "entry, problem",
    [
        ("  - {name: a, command: x, url: 'http://h/mcp', tools: [t]}\n", "exactly one of"),
        ("  - {name: a, command: x, tools: []}\n", "tools"),
        ("  - {name: 'a b', command: x, tools: [t]}\n", "name"),
        (
            "  - {name: a, url: 'http://h/mcp', headers_from_env: {Authorization: 'Bearer sk-123'}, tools: [t]}\n",
            "NAMES",
        ),
        ("  - {name: a, command: x, tools: [t], secret: y}\n", "secret"),
    ],
)
def test_a_bad_servers_file_names_the_file_the_key_and_the_line(tmp_path, entry, problem):
    path = tmp_path / "mcp.yaml"
    path.write_text("servers:\n" + entry, encoding="utf-8")
    with pytest.raises(McpConfigError) as caught:
        McpServersFile.load(path)
    message = str(caught.value)
    assert "mcp.yaml" in message and "servers[0]" in message and "line 2" in message and problem in message
    assert "sk-123" not in message, "a secret put in the file is not echoed back"


def test_two_servers_may_not_give_the_same_tool_name():
    with pytest.raises(ValueError, match="same tool name"):
        McpServersFile.model_validate(
            {
                "servers": [
                    {"name": "a", "command": "x", "tools": ["t"], "prefix": ""},
                    {"name": "b", "command": "y", "tools": ["t"], "prefix": ""},
                ]
            }
        )


# -- stdio ----------------------------------------------------------------------------------


def test_stdio_lists_only_the_allow_listed_tools_with_the_servers_schemas():
    async def check(client: McpClient) -> None:
        names = [f"mcp_echo_{t}" for t in ALLOWED]
        assert client.tool_names() == names
        # known by name before listing (a prestart may name one), not offered to the model yet
        assert not any(t.callable_by_llm for t in client.tools())
        await asyncio.gather(*client.start())
        tools = {t.name: t for t in client.tools()}
        assert all(t.callable_by_llm for t in tools.values())
        add = tools["mcp_echo_add"]
        assert add.description == "Add two integers."
        assert add.parameters == {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}}
        assert add.required == ("a", "b")
        assert add.schema()["function"]["name"] == "mcp_echo_add"
        assert "forbidden" not in json.dumps([t.schema() for t in tools.values()])
        assert sorted(client.servers["echo"].listed) == sorted(ALLOWED)

    run(check, stdio_servers())


def test_stdio_calls_round_trip_through_the_tool_registry():
    async def check(client: McpClient) -> None:
        registry = ToolRegistry()
        for tool in client.tools():
            registry.add(tool)
        ctx = ToolContext(owner="alice", question="q")
        assert (
            await registry.run("mcp_echo_echo", {"text": "hello 你好", "owner": "mallory"}, ctx) == "echo: hello 你好"
        )
        assert await registry.run("mcp_echo_add", {"a": 2, "b": 40}, ctx) == "42"
        # the server reports bad arguments as a tool error: the model gets it as text
        assert (await registry.run("mcp_echo_add", {"a": "two", "b": 1}, ctx)).startswith("error: ")

    run(check, stdio_servers())


def test_a_tool_off_the_allow_list_is_not_offered_and_a_call_naming_it_is_refused():
    async def check(client: McpClient) -> None:
        await asyncio.gather(*client.start())
        assert "mcp_echo_forbidden" not in client.tool_names()
        with pytest.raises(McpToolRefused, match="not an allow-listed MCP tool"):
            await client.call("mcp_echo_forbidden", {})
        with pytest.raises(McpToolRefused, match="not on the allow-list"):
            await client.servers["echo"].call("forbidden", {})
        registry = ToolRegistry()
        for tool in client.tools():
            registry.add(tool)
        with pytest.raises(ToolError, match="unknown tool"):
            await registry.run("mcp_echo_forbidden", {}, ToolContext(owner="", question=""))

    run(check, stdio_servers())


def test_an_allow_listed_tool_the_server_lacks_stays_hidden_and_fails_clearly():
    async def check(client: McpClient) -> None:
        await asyncio.gather(*client.start())
        tools = {t.name: t for t in client.tools()}
        assert tools["mcp_echo_echo"].callable_by_llm and not tools["mcp_echo_nosuch"].callable_by_llm
        with pytest.raises(McpClientError, match="does not offer tool 'nosuch'"):
            await client.call("mcp_echo_nosuch", {})

    run(check, stdio_servers(tools=["echo", "nosuch"]))


def test_a_crashed_stdio_server_is_restarted_on_the_next_call():
    async def check(client: McpClient) -> None:
        first = int(await client.call("mcp_echo_pid", {}))
        with pytest.raises(McpUnavailable, match="lost during 'crash'"):
            await client.call("mcp_echo_crash", {})
        second = int(await client.call("mcp_echo_pid", {}))
        assert second != first
        assert client.servers["echo"].starts == 2
        assert await client.call("mcp_echo_echo", {"text": "back"}) == "echo: back"
        wait_until(lambda: not children.alive(first), message=f"the crashed server {first} to be reaped")

    run(check, stdio_servers())


def test_a_restart_back_off_longer_than_the_call_budget_refuses_the_call():
    async def check(client: McpClient) -> None:
        with pytest.raises(McpUnavailable):
            await client.call("mcp_echo_crash", {})
        with pytest.raises(McpUnavailable, match=r"failed 1 time\(s\); next restart in"):
            await client.call("mcp_echo_echo", {"text": "too soon"})
        assert client.servers["echo"].starts == 1

    run(check, stdio_servers(restart_backoff=120, max_backoff=120, call_timeout=2))


def test_a_call_over_its_timeout_fails_and_the_server_lives_on():
    async def check(client: McpClient) -> None:
        pid = await client.call("mcp_echo_pid", {})
        with pytest.raises(McpClientError, match=r"did not answer within 1s \(call_timeout\)"):
            await client.call("mcp_echo_slow", {"seconds": 30})
        assert await client.call("mcp_echo_pid", {}) == pid

    run(check, stdio_servers(call_timeout=1))


def test_a_server_that_never_answers_fails_its_start_timeout_and_leaves_no_process():
    hung = McpServersFile.model_validate(
        {
            "servers": [
                {
                    "name": "hung",
                    "command": sys.executable,
                    "args": ["-c", "import sys; sys.stdin.read()"],
                    "tools": ["x"],
                    "start_timeout": 1,
                }
            ]
        }
    )

    async def check(client: McpClient) -> list[int]:
        with pytest.raises(McpUnavailable, match=r"did not start within 1s \(start_timeout\)"):
            await client.servers["hung"].list_tools()
        return children.of(os.getpid())

    # other tests' long-lived children (session fixtures) may share this process: only the
    # ones that appeared during the check are the hung server's
    before = set(children.of(os.getpid()))
    during = [p for p in run(check, hung) if p not in before]
    assert during, "the hung server was started as a child process"
    wait_until(
        lambda: not [p for p in during if p in children.of(os.getpid()) and children.alive(p)],
        message="the hung server to be gone",
    )


def test_shutdown_leaves_no_child_process():
    async def check(client: McpClient) -> int:
        await asyncio.gather(*client.start())
        pid = int(await client.call("mcp_echo_pid", {}))
        assert pid in mcp_children()
        return pid

    pid = run(check, stdio_servers())
    assert not children.alive(pid)
    assert mcp_children() == []


def test_a_failed_start_names_the_server_and_a_later_call_retries():
    broken = McpServersFile.model_validate(
        {"servers": [{"name": "gone", "command": "/nonexistent/mcp-server", "tools": ["x"], "restart_backoff": 0}]}
    )

    async def check(client: McpClient) -> None:
        await asyncio.gather(*client.start())  # logged, not raised: the node lives on
        with pytest.raises(McpUnavailable, match="'gone' could not be started"):
            await client.call("mcp_gone_x", {})
        assert client.servers["gone"].starts == 2

    run(check, broken)


def test_child_environment_comes_from_named_variables_only():
    servers = stdio_servers(env_from={"CHILD_TOKEN": "FAY_TEST_PARENT_TOKEN"})
    client = McpClient(servers, environ={})
    assert client.missing_environment() == {"echo": ["FAY_TEST_PARENT_TOKEN"]}

    async def check(client: McpClient) -> None:
        with pytest.raises(McpUnavailable, match="FAY_TEST_PARENT_TOKEN"):
            await client.call("mcp_echo_echo", {"text": "x"})

    run(check, servers, environ={})


# -- streamable HTTP ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_server():
    env = {**os.environ, "MCP_TEST_TOKEN": "s3cret-token"}
    process = subprocess.Popen([sys.executable, str(SERVER), "--http"], stdout=subprocess.PIPE, text=True, env=env)
    try:
        line = process.stdout.readline()  # "port N" once the socket listens
        assert line.startswith("port "), f"the HTTP MCP server did not start: {line!r}"
        yield f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    finally:
        process.terminate()
        process.wait(10)


def http_servers(url: str, **overrides: Any) -> McpServersFile:
    server = {
        "name": "web",
        "url": url,
        "headers_from_env": {"X-Fay-Token": TOKEN_ENV},
        "tools": ["echo", "add"],
        "start_timeout": 20,
        "call_timeout": 5,
        **overrides,
    }
    return McpServersFile.model_validate({"servers": [server]})


def test_streamable_http_lists_and_calls_with_the_header_from_the_environment(http_server):
    async def check(client: McpClient) -> None:
        await asyncio.gather(*client.start())
        tools = {t.name: t for t in client.tools()}
        assert list(tools) == ["mcp_web_echo", "mcp_web_add"] and all(t.callable_by_llm for t in tools.values())
        assert tools["mcp_web_echo"].parameters == {"text": {"title": "Text", "type": "string"}}
        assert await client.call("mcp_web_echo", {"text": "over http"}) == "echo: over http"
        assert await client.call("mcp_web_add", {"a": 1, "b": 2}) == "3"
        with pytest.raises(McpToolRefused):
            await client.servers["web"].call("forbidden", {})

    run(check, http_servers(http_server), environ={TOKEN_ENV: "s3cret-token"})


def test_streamable_http_with_a_wrong_token_fails_to_start_without_showing_it(http_server):
    async def check(client: McpClient) -> str:
        with pytest.raises(McpUnavailable, match="'web' could not be started") as caught:
            await client.call("mcp_web_echo", {"text": "x"})
        return str(caught.value)

    message = run(check, http_servers(http_server, start_timeout=10), environ={TOKEN_ENV: "wrong-value"})
    assert "wrong-value" not in message


def test_result_content_becomes_text_for_the_model():
    import mcp.types as t

    result = t.CallToolResult(
        content=[
            t.TextContent(type="text", text="first"),
            t.ImageContent(type="image", data="AA==", mime_type="image/png"),
            t.EmbeddedResource(type="resource", resource=t.TextResourceContents(uri="file:///a.txt", text="inside")),
        ]
    )
    assert result_text(result) == "first\n[image/png]\ninside"
    assert result_text(t.CallToolResult(content=[], structured_content={"b": 1, "a": 2})) == '{"a": 2, "b": 1}'
    assert (
        result_text(t.CallToolResult(content=[t.TextContent(type="text", text="boom")], is_error=True)) == "error: boom"
    )


# -- a persona prestart may name an MCP tool --------------------------------------------------


def test_a_persona_prestart_runs_an_mcp_tool_and_feeds_the_prompt():
    """The tool exists by name before any listing, so the engine accepts the prestart; its first
    run starts the server."""
    llm = fake.ScriptedLlm()
    persona = Persona(prestart=[PrestartSpec(tool="mcp_echo_echo", args={"text": "about {{question}}"})])

    async def check(client: McpClient) -> None:
        registry = ToolRegistry()
        for tool in client.tools():
            registry.add(tool)
        engine = DialogueEngine(
            persona,
            ChatClient(Endpoint(llm.base_url, "small-model")),
            lambda piece: None,
            tools=registry,
            settings=EngineSettings(prestart_timeout=20.0),
        )
        try:
            assert client.servers["echo"].starts == 0
            llm.script(fake.judge_finish("At nine."))
            trace = await engine.run_turn("alice", "shop hours?", "en")
            assert trace.error == ""
            assert "[mcp_echo_echo] echo: about shop hours?" in llm.requests[0]["messages"][0]["content"]
            assert client.servers["echo"].starts == 1
        finally:
            await engine.small.close()

    try:
        run(check, stdio_servers())
    finally:
        llm.close()


# -- end to end: the dialogue node calls an MCP tool ------------------------------------------


def tool_result_answer(body: dict[str, Any]) -> fake.Scripted:
    """A scripted model that reads its prompt: it says what the echo tool returned."""
    found = next((m["content"] for m in body["messages"] if "echo: " in str(m.get("content"))), "")
    text = str(found)[str(found).index("echo: ") :].split("\n")[0] if found else "I found nothing."
    return fake.text(f"The tool said {text}.")


def test_the_dialogue_node_calls_an_mcp_tool_and_answers_with_its_result(tmp_path, launch_node):
    servers = write_tools_file(
        tmp_path / "tools.yaml",
        mcp=(
            f"servers:\n  - name: echo\n    command: {json.dumps(sys.executable)}\n"
            f"    args: [{json.dumps(str(SERVER))}]\n    tools: [echo]\n    start_timeout: 30\n"
        ),
    )
    llm = fake.ScriptedLlm()
    probe = RosProbe("mcp_dialogue_probe")
    try:
        node: NodeProcess = launch_node(
            "fay_ros.nodes.dialogue",
            {
                "base_url": llm.base_url,
                "model": "scripted",
                "first_token_timeout": 5.0,
                "memory": False,
                "qa_file": "none",
                "model_profile": "capable",
                "tools_file": str(servers),
            },
        )
        diagnostics = probe.collect(DiagnosticArray, topics.DIAGNOSTICS)
        node.wait_ready(probe=probe)

        def listed():
            return [s for array in diagnostics.messages for s in array.status if s.name == "fay/dialogue: mcp"]

        status = wait_until(listed, 30, message=lambda: f"the MCP listing on /diagnostics:\n{node.output()[-2000:]}")[0]
        assert (status.level, status.message) == (DiagnosticStatus.OK, "MCP server echo: 1 tool(s) ['echo']")
        server_pids = children.of(node.pid)
        assert server_pids, "the stdio MCP server runs as the node's child"
        replies = probe.collect(Utterance, topics.REPLY)
        pub = probe.publisher(Transcript, topics.TEXT_INPUT)
        probe.wait_for_subscribers(pub)
        llm.script(
            fake.judge_tool("echo"),
            fake.tool_call("mcp_echo_echo", json.dumps({"text": "banana-42"})),
            fake.loop_finish(),
        )
        llm.responder = tool_result_answer
        pub.publish(
            Transcript(text="Please echo banana-42", user_id="alice", language="en", is_final=True, confidence=0.9)
        )
        replies.wait_for(lambda msgs: next((m for m in msgs if m.is_end), None), what="the end of the reply")
        said = " ".join(m.text for m in replies.messages if m.source == "llm")
        assert "echo: banana-42" in said, [(m.source, m.text) for m in replies.messages]
        offered = [t["function"]["name"] for r in llm.requests for t in r.get("tools", [])]
        assert "mcp_echo_echo" in offered, "the model is offered the MCP tool with the server's schema"
        node.stop()
        assert not [p for p in server_pids if children.alive(p)], "no MCP server outlives the node"
    finally:
        llm.close()
        probe.close()


def test_an_unset_variable_named_by_the_servers_file_stops_the_node_with_the_reason(tmp_path, launch_node):
    servers = write_tools_file(
        tmp_path / "tools.yaml",
        mcp=(
            "servers:\n  - name: web\n    url: http://127.0.0.1:9/mcp\n"
            "    headers_from_env: {Authorization: FAY_TEST_UNSET_MCP_AUTH}\n    tools: [echo]\n"
        ),
    )
    proc = launch_node(
        "fay_ros.nodes.dialogue",
        {"base_url": "http://127.0.0.1:9/v1", "model": "scripted", "tools_file": str(servers)},
        env={"FAY_TEST_UNSET_MCP_AUTH": ""},
    )
    assert proc.wait_exit(30) == 2
    assert "parameter 'tools_file' (mcp)" in proc.output() and "FAY_TEST_UNSET_MCP_AUTH" in proc.output()
