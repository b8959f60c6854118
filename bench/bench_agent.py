"""Tool round-trip overhead of the agent's tools, each against the same call made directly.

1. ROS service tool (fay_ros.ros_side.ros_tools.RosTools) on std_srvs/Trigger /robot/dock of the
   robot stand-in process (test/procs/robot_server.py), vs. rclpy `call_async` on the same
   node (baseline), plus the same `call_async` awaited from asyncio (to split the overhead).
2. MCP stdio tool (fay_ros.agent.mcp_client.McpClient) `echo` of test/procs/mcp_echo_server.py,
   vs. the official SDK's ClientSession over stdio to a second process of the same server
   (baseline).

Both tools are called the way the dialogue calls them: through a ToolRegistry (`run`, which
strips identity arguments and bounds the call with a timeout). The calls are interleaved
(baseline, tool, baseline, tool, ...) so both see the same machine load.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.stats import ms, percentile

TITLE = "Agent: tool round-trip overhead (ROS service, MCP stdio)"
CALLS = 1000
WARMUP = 50
ROOT = Path(__file__).resolve().parents[1]
MCP_SERVER = ROOT / "test" / "procs" / "mcp_echo_server.py"
CALL_TIMEOUT = 5.0  # seconds any single call may take before the benchmark gives up


def _delta(tool: float, base: float) -> str:
    return f"{(tool - base) * 1000:+.2f} ms"


def _row(label: str, samples: list[float]) -> str:
    return f"| {label} | {ms(percentile(samples, 0.5))} | {ms(percentile(samples, 0.95))} |"


# -- 1. ROS service ------------------------------------------------------------------------------


def _bench_ros() -> dict[str, list[float]]:
    from std_srvs.srv import Trigger

    from fay_ros.agent.ros_tools_config import RosToolsConfig
    from fay_ros.dialogue.tools import ToolContext, ToolRegistry
    from fay_ros.ros_side.ros_tools import RosTools, await_ros_future
    from harness import NodeProcess, RosProbe

    config = RosToolsConfig.model_validate(
        {
            "services": [
                {
                    "name": "/robot/dock",
                    "type": "std_srvs/srv/Trigger",
                    "description": "Drive to the dock.",
                    "timeout": CALL_TIMEOUT,
                }
            ]
        }
    )
    probe = RosProbe("bench_agent_probe")
    server = NodeProcess("procs.robot_server")
    built: RosTools | None = None
    try:
        server.wait_ready(probe=probe)
        built = RosTools(probe.node, config, source="bench_agent")
        registry = ToolRegistry()
        for tool in built.tools:
            registry.add(tool)
        [name] = registry.names()
        client = probe.node.create_client(Trigger, "/robot/dock")
        if not client.wait_for_service(timeout_sec=20):
            raise RuntimeError(f"service /robot/dock not available; robot_server output:\n{server.output()[-2000:]}")
        request = Trigger.Request()

        def direct() -> Any:
            future = client.call_async(request)
            done = threading.Event()
            future.add_done_callback(lambda _f: done.set())
            if not done.wait(CALL_TIMEOUT):
                client.remove_pending_request(future)
                raise RuntimeError(f"/robot/dock did not answer within {CALL_TIMEOUT}s")
            return future.result()

        async def bridged() -> Any:
            future = client.call_async(request)
            await asyncio.wait_for(await_ros_future(future), CALL_TIMEOUT)
            return future.result()

        async def measure() -> dict[str, list[float]]:
            ctx = ToolContext(owner="bench", question="")
            answer = await registry.run(name, {}, ctx, timeout=CALL_TIMEOUT)
            if json.loads(answer) != {"success": True, "message": "docked"}:
                raise RuntimeError(f"the service tool answered {answer!r}")
            if direct().message != "docked" or (await bridged()).message != "docked":
                raise RuntimeError("the direct calls got a wrong answer")
            out: dict[str, list[float]] = {"direct": [], "bridged": [], "tool": []}
            for i in range(WARMUP + CALLS):
                t0 = time.perf_counter()
                direct()  # blocks the loop for one call: nothing else runs on it here
                t1 = time.perf_counter()
                await bridged()
                t2 = time.perf_counter()
                await registry.run(name, {}, ctx, timeout=CALL_TIMEOUT)
                t3 = time.perf_counter()
                if i >= WARMUP:
                    out["direct"].append(t1 - t0)
                    out["bridged"].append(t2 - t1)
                    out["tool"].append(t3 - t2)
            return out

        result = asyncio.run(measure())
        probe.node.destroy_client(client)
        return result
    finally:
        if built is not None:
            built.close()
        server.stop()
        probe.close()


# -- 2. MCP over stdio ---------------------------------------------------------------------------


async def _measure_mcp(errlog: Any) -> dict[str, list[float]]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    from fay_ros.agent.mcp_client import McpClient
    from fay_ros.agent.mcp_config import McpServersFile
    from fay_ros.dialogue.tools import ToolContext, ToolRegistry

    servers = McpServersFile.model_validate(
        {
            "servers": [
                {
                    "name": "echo",
                    "command": sys.executable,
                    "args": [str(MCP_SERVER)],
                    "tools": ["echo"],
                    "start_timeout": 30,
                    "call_timeout": CALL_TIMEOUT,
                }
            ]
        }
    )
    client = McpClient(servers, errlog=errlog)
    try:
        await asyncio.gather(*client.start())
        registry = ToolRegistry()
        for tool in client.tools():
            registry.add(tool)
        [name] = registry.names()
        listed = registry.get(name)
        if listed is None or not listed.callable_by_llm:
            raise RuntimeError(f"MCP server did not list echo; its stderr is in {errlog.name}")
        params = StdioServerParameters(command=sys.executable, args=[str(MCP_SERVER)])
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await asyncio.wait_for(session.initialize(), 30)
                ctx = ToolContext(owner="bench", question="")
                args = {"text": "你好, Fay"}
                answer = await registry.run(name, args, ctx, timeout=CALL_TIMEOUT)
                if answer != "echo: 你好, Fay":
                    raise RuntimeError(f"the MCP tool answered {answer!r}")
                out: dict[str, list[float]] = {"direct": [], "tool": []}
                for i in range(WARMUP + CALLS):
                    t0 = time.perf_counter()
                    result = await asyncio.wait_for(session.call_tool("echo", args), CALL_TIMEOUT)
                    t1 = time.perf_counter()
                    await registry.run(name, args, ctx, timeout=CALL_TIMEOUT)
                    t2 = time.perf_counter()
                    if result.is_error:
                        raise RuntimeError(f"the direct MCP call failed: {result.content}")
                    if i >= WARMUP:
                        out["direct"].append(t1 - t0)
                        out["tool"].append(t2 - t1)
                return out
    finally:
        await client.close()


def _bench_mcp() -> dict[str, list[float]]:
    """The servers' stderr goes to a log file, kept (and named in the error) only on failure."""
    with tempfile.NamedTemporaryFile("w+", prefix="bench_agent_mcp_", suffix=".log", delete=False) as errlog:
        result = asyncio.run(_measure_mcp(errlog))
    Path(errlog.name).unlink()
    return result


# -- report --------------------------------------------------------------------------------------


def run() -> str:
    ros = _bench_ros()
    mcp = _bench_mcp()
    r_direct, r_bridged, r_tool = (percentile(ros[k], 0.5) for k in ("direct", "bridged", "tool"))
    m_direct, m_tool = percentile(mcp["direct"], 0.5), percentile(mcp["tool"], 0.5)
    return (
        f"{CALLS} calls each after {WARMUP} warm-up calls, one at a time, the tool and its baseline "
        "interleaved. The tools are called as the dialogue calls them, through a `ToolRegistry` "
        "(argument clean-up, a timeout per call).\n\n"
        "**ROS service tool** (`ros_call_robot_dock`, `RosTools` in this process, std_srvs/Trigger "
        "served by the robot stand-in process `test/procs/robot_server.py`):\n\n"
        "| path | p50 | p95 |\n|---|---|---|\n"
        + _row(
            "baseline: rclpy `call_async` on the same node, the caller blocked on a `threading.Event`", ros["direct"]
        )
        + "\n"
        + _row("`call_async` awaited from asyncio (`await_ros_future`)", ros["bridged"])
        + "\n"
        + _row("agent tool: arguments → request, discovery check, call, response → JSON", ros["tool"])
        + "\n\n"
        f"ROS tool / direct `call_async`: **{r_tool / r_direct:.2f}×** (p50), {_delta(r_tool, r_direct)} per call. "
        f"Awaiting the same `call_async` from asyncio alone is {r_bridged / r_direct:.2f}× the baseline; the "
        f"tool's own work on top of that is {r_tool / r_bridged:.2f}× ({_delta(r_tool, r_bridged)}).\n\n"
        "**MCP stdio tool** (`mcp_echo_echo`, `McpClient`, the `echo` tool of "
        "`test/procs/mcp_echo_server.py` in a child process over stdio):\n\n"
        "| path | p50 | p95 |\n|---|---|---|\n"
        + _row("baseline: the SDK's `ClientSession.call_tool` over stdio", mcp["direct"])
        + "\n"
        + _row("agent tool: allow-list check, session look-up, `call_tool`, result → text", mcp["tool"])
        + "\n\n"
        f"MCP tool / direct SDK call: **{m_tool / m_direct:.2f}×** (p50), {_delta(m_tool, m_direct)} per call"
        + (
            "; the client's own work is lost in the noise of the stdio round trip. "
            if m_tool / m_direct < 1.05
            else ". "
        )
        + f"For scale: one direct MCP stdio call costs {m_direct / r_direct:.1f}× one direct ROS service call "
        "on this machine."
    )
