"""Shared fixtures: an isolated ROS environment, node subprocesses, and a probe node."""
from __future__ import annotations

import pytest

from harness import NodeProcess, RosProbe, ros_environment, start_llm
from manual_clock import Clock

# Isolate before anything imports rclpy: own domain, localhost discovery, own log dir.
ros_environment()


@pytest.fixture
def launch_node(request):
    """Factory: launch_node(module, params, ...) -> NodeProcess; all are stopped afterwards.

    When a test fails, the output of its nodes is attached to the report.
    """
    started: list[NodeProcess] = []

    def start(module: str, params: dict | None = None, **kwargs) -> NodeProcess:
        proc = NodeProcess(module, params, **kwargs)
        started.append(proc)
        return proc

    yield start
    failed = getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed
    for proc in reversed(started):
        proc.stop()
        if failed:
            print(f"\n----- output of {proc.module} (pid {proc.pid}) -----\n{proc.output()[-4000:]}")


@pytest.fixture(scope="session")
def embedded_llm():
    """The embedded offline model (`fay-ros llm`: SmolLM2-135M served by llama.cpp) on a free
    loopback port, shared by the tests that need the real model: (base_url, process)."""
    proc, url = start_llm("--threads", "2")
    try:
        yield url, proc
    finally:
        proc.stop()


@pytest.fixture(scope="module")
def llm():
    """A scripted OpenAI-compatible LLM on a loopback port (test/dialogue_fake_llm.py), one per
    test module; tests script it, `llm.reset()` clears it."""
    import dialogue_fake_llm as fake

    server = fake.ScriptedLlm()
    yield server
    server.close()


@pytest.fixture
def ros():
    """A RosProbe node in the test process (namespace /fay)."""
    probe = RosProbe()
    yield probe
    probe.close()


@pytest.fixture
def clock():
    """A clock the test moves by hand (set `clock.t`), for time-dependent cores."""
    return Clock()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)
